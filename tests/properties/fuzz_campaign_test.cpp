// The time-boxed fuzzer behind `pacheck fuzz`: clean on a correct variant until its budget; stops at a broken one
// (a throwing one included) with a case file that replays it; reports a crash or hang with its round and problem;
// skips a GPU variant without a device. The broken variants are local: the registry is untouched.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "problem/case_file.h"
#include "properties/agreement.h"
#include "properties/fuzz_campaign.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

bool has_prefill(const Problem& p) {
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s)
    if (p.mode_of(s) == Mode::prefill) return true;
  return false;
}

// cpu_streaming broken in one way.
class BrokenVariant : public ForwardingVariant {
 public:
  enum class Bug { zero_output, throw_on_prefill, abort_on_prefill, hang_on_prefill, needs_a_gpu };
  explicit BrokenVariant(Bug bug) : ForwardingVariant(Registry::instance().get("cpu_streaming")), bug_(bug) {}
  std::string name() const override { return "test_broken"; }
  std::string description() const override { return "cpu_streaming with a planted bug"; }
  Capabilities capabilities() const override {
    Capabilities c = inner_.capabilities();
    c.needs_gpu = bug_ == Bug::needs_a_gpu;
    return c;
  }
  Output run(const Problem& p, const Knobs& k) const override {
    const bool prefill = has_prefill(p);
    if (bug_ == Bug::zero_output) return Output(p.output_size(), 0.0f);
    if (bug_ == Bug::throw_on_prefill && prefill) throw std::runtime_error("illegal address (planted)");
    if (bug_ == Bug::abort_on_prefill && prefill) std::abort();
    if (bug_ == Bug::hang_on_prefill && prefill)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return inner_.run(p, k);
  }

 private:
  Bug bug_;
};

// Options for a run of `seconds` (a failure ends most runs long before).
FuzzCampaignOptions options_for(const Variant& v, const std::string& test_name, double seconds = 60) {
  FuzzCampaignOptions o;
  o.variant = &v;
  o.seconds = seconds;
  o.seed = 11;
  o.failure_dir = std::filesystem::path(::testing::TempDir()) / ("pacheck-fuzz-" + test_name);
  std::filesystem::remove_all(o.failure_dir);
  o.replay_program = PACHECK_BINARY;
  o.gpu_available = [](std::string* reason) {
    *reason = "no CUDA device in this test";
    return false;
  };
  return o;
}

TEST(FuzzCampaign, RunsACorrectVariantCleanUntilItsBudget) {
  const FuzzCampaignOptions o = options_for(Registry::instance().get("cpu_streaming"), "clean", 2);
  int progress_calls = 0;
  const FuzzReport r = run_fuzz_campaign(o, [&](const FuzzProgress&) { ++progress_calls; });
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().message;
  EXPECT_FALSE(r.skipped);
  EXPECT_GT(r.totals.cases, 0);
  EXPECT_GE(r.totals.elapsed_seconds, o.seconds);
  EXPECT_GE(progress_calls, 1);
  long long per_property = 0;
  for (const auto& [name, cases] : r.cases_per_property) per_property += cases;
  EXPECT_EQ(per_property, r.totals.cases);
}

TEST(FuzzCampaign, StopsAtAFailureWithACaseFileThatReplaysIt) {
  const BrokenVariant broken(BrokenVariant::Bug::zero_output);
  FuzzCampaignOptions o = options_for(broken, "zero-output");
  o.jobs = 2;
  int reported = 0;
  const FuzzReport r = run_fuzz_campaign(o, {}, [&](const FuzzFailure&) { ++reported; });
  ASSERT_FALSE(r.failures.empty());
  EXPECT_EQ(reported, static_cast<int>(r.failures.size()));
  EXPECT_LT(r.totals.elapsed_seconds, 30) << "the campaign must stop at its first failure";
  const FuzzFailure& f = r.failures.front();
  EXPECT_NE(f.check_command.find("--seed " + std::to_string(f.seed) + " --cases 20 --reproduce "), std::string::npos)
      << f.check_command;
  ASSERT_FALSE(f.case_files.empty()) << f.message;
  const Case c = read_case_file(f.case_files.front());
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs));
  EXPECT_FALSE(compare_with_oracle(c.problem, oracle, broken, c.knobs, broken.run(c.problem, c.knobs)).ok)
      << "the saved case must reproduce the failure";
}

TEST(FuzzCampaign, OnEngineShapesDrawsThemAndItsReproduceCommandSaysSo) {
  const BrokenVariant broken(BrokenVariant::Bug::zero_output);
  FuzzCampaignOptions o = options_for(broken, "engine-shapes");
  o.engine_shapes = true;
  const FuzzReport r = run_fuzz_campaign(o, {}, [](const FuzzFailure&) {});
  ASSERT_FALSE(r.failures.empty());
  const FuzzFailure& f = r.failures.front();
  EXPECT_NE(f.check_command.find(" --engine-shapes --reproduce "), std::string::npos) << f.check_command;
  ASSERT_FALSE(f.case_files.empty()) << f.message;
  const Case c = read_case_file(f.case_files.front());
  EXPECT_EQ(c.problem.block_size % 16, 0) << "an engine-shape case";
  EXPECT_EQ(c.knobs.tile_size % 16, 0) << "an engine-shape case";
}

TEST(FuzzCampaign, ReportsACrashWithTheRoundThatCrashed) {
  const BrokenVariant broken(BrokenVariant::Bug::abort_on_prefill);
  const FuzzReport r = run_fuzz_campaign(options_for(broken, "abort"));
  ASSERT_EQ(r.failures.size(), 1u);
  const FuzzFailure& f = r.failures.front();
  EXPECT_NE(f.message.find("killed by signal " + std::to_string(SIGABRT)), std::string::npos) << f.message;
  EXPECT_NE(f.check_command.find("--property " + f.property + " --seed " + std::to_string(f.seed)), std::string::npos)
      << f.check_command;
  // The round was re-run recording every problem: the saved case is the one the kernel aborts on.
  ASSERT_EQ(f.case_files.size(), 1u) << f.message;
  EXPECT_NE(f.case_files.front().filename().string().find("-crash.json"), std::string::npos);
  const Problem p = read_case_file(f.case_files.front()).problem;
  EXPECT_TRUE(has_prefill(p)) << "the planted bug aborts only on prefill:\n" << describe(p);
}

TEST(FuzzCampaign, SavesTheCaseAKernelThrowsOn) {
  const BrokenVariant broken(BrokenVariant::Bug::throw_on_prefill);
  const FuzzReport r = run_fuzz_campaign(options_for(broken, "throw"));
  ASSERT_EQ(r.failures.size(), 1u);
  const FuzzFailure& f = r.failures.front();
  EXPECT_NE(f.message.find("illegal address (planted)"), std::string::npos) << f.message;
  ASSERT_EQ(f.case_files.size(), 1u) << f.message;
  const Case c = read_case_file(f.case_files.front());
  EXPECT_NE(c.note.find("the kernel threw: illegal address (planted)"), std::string::npos) << c.note;
  EXPECT_THROW(broken.run(c.problem, c.knobs), std::runtime_error) << "the saved case must reproduce the fault";
}

TEST(FuzzCampaign, KillsAHungWorkerAfterTheGracePeriod) {
  const BrokenVariant broken(BrokenVariant::Bug::hang_on_prefill);
  FuzzCampaignOptions o = options_for(broken, "hang", 1);
  o.grace_seconds = 1;
  const FuzzReport r = run_fuzz_campaign(o);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures.front().message.find("still in this round"), std::string::npos) << r.failures.front().message;
  ASSERT_EQ(r.failures.front().case_files.size(), 1u) << r.failures.front().message;
  EXPECT_NE(r.failures.front().case_files.front().filename().string().find("-hang.json"), std::string::npos);
  EXPECT_LT(r.totals.elapsed_seconds, 20);
}

TEST(FuzzCampaign, SkipsAGpuVariantWhenNoDeviceAnswers) {
  const BrokenVariant gpu(BrokenVariant::Bug::needs_a_gpu);
  const FuzzReport r = run_fuzz_campaign(options_for(gpu, "gpu", 2));
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.skip_reason, "no CUDA device in this test");
  EXPECT_EQ(r.totals.cases, 0);
  EXPECT_TRUE(r.failures.empty());
}

TEST(FuzzCampaign, RefusesBadOptions) {
  FuzzCampaignOptions o = options_for(Registry::instance().get("cpu_streaming"), "bad", 2);
  o.seconds = 0;
  EXPECT_THROW(run_fuzz_campaign(o), std::invalid_argument);
  o.seconds = 1;
  o.jobs = 0;
  EXPECT_THROW(run_fuzz_campaign(o), std::invalid_argument);
  o.jobs = 1;
  o.variant = nullptr;
  EXPECT_THROW(run_fuzz_campaign(o), std::invalid_argument);
}

}  // namespace
}  // namespace pacheck
