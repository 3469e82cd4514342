// The mutant kill matrix (printed): every mutant dies within the default case count, every property kills, the
// precision mutants die to the error bound itself. Also: the meta-kernel without its bug is bit-identical to its
// correct twin, mutants declare their counterpart's promises, the matrix records RapidCheck's shrunk case.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>

#include "properties/catalogue.h"
#include "properties/generators.h"
#include "properties/kill_matrix.h"
#include "properties/property_steps.h"
#include "tests/fixtures/test_files.h"
#include "variants/mutants/mutant.h"

namespace pacheck {
namespace {

KillOptions options_for(const std::string& test_name) {
  KillOptions o;  // the defaults: 100 cases, seed 1
  o.failure_dir = std::filesystem::path(::testing::TempDir()) / ("pacheck-" + test_name);
  o.replay_program = PACHECK_BINARY;
  return o;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const KillCell* cell_of(const KillMatrix& m, const std::string& mutant, const std::string& property) {
  for (const KillCell& c : m.cells)
    if (c.mutant == mutant && c.property == property) return &c;
  return nullptr;
}

bool bit_identical(const Output& a, const Output& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(KillMatrix, EveryMutantDiesAndEveryPropertyKills) {
  const auto start = std::chrono::steady_clock::now();
  const KillMatrix matrix = run_kill_matrix(options_for("full-matrix"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << format_matrix(matrix) << "\n" << format_summary(matrix) << "(" << seconds << " s)\n";

  ASSERT_EQ(matrix.mutants.size(), mutants::catalogue().size()) << "the matrix runs every mutant of the catalogue";
  const KillSummary summary = summarize(matrix);
  EXPECT_TRUE(summary.survivors.empty()) << "mutants no property killed in " << matrix.cases_per_property
                                         << " cases: " << joined(summary.survivors);
  EXPECT_TRUE(summary.idle_properties.empty()) << "properties that killed no mutant: "
                                               << joined(summary.idle_properties);
  for (const KillCell& c : matrix.cells) {
    if (!c.killed) continue;
    EXPECT_LE(c.cases_to_kill, matrix.cases_per_property) << c.mutant << " / " << c.property;
    EXPECT_GT(c.shrunk_size, 0u) << c.mutant << " / " << c.property << ": no shrunk case recorded";
  }
  // The precision mutants are only too inexact: if UlpBoundedAgreement misses them, the error model is too loose.
  for (const char* precision_mutant : {"pv_in_bf16", "exp_poly2"}) {
    const KillCell* c = cell_of(matrix, precision_mutant, "UlpBoundedAgreement");
    ASSERT_NE(c, nullptr) << precision_mutant << " is not in the matrix";
    EXPECT_TRUE(c->killed) << "the error bound does not see " << precision_mutant;
    EXPECT_EQ(c->failure.find("illegal address"), std::string::npos) << c->failure;
    EXPECT_NE(c->failure.find("disagrees with the oracle"), std::string::npos) << c->failure;
  }
  // Each law of the logit options fails on the real bug it exists for.
  for (const auto& [mutant, property] : {std::pair{"window_one_too_many", "WindowedOutKeysZeroWeight"},
                                         std::pair{"softcap_tanh_from_sigmoid", "LargeSoftCapIsNoCap"},
                                         std::pair{"sink_sentinel", "MinusInfinitySinkIsNoSink"}}) {
    const KillCell* c = cell_of(matrix, mutant, property);
    ASSERT_NE(c, nullptr) << mutant << " / " << property << " is not in the matrix";
    EXPECT_TRUE(c->killed) << property << " does not kill " << mutant;
  }
}

// The matrix sees a failing case three ways: an observed agreement (acc_not_rescaled), an observation without one
// (masked_v_not_zeroed under MaskedLanesZeroWeight), a mutant throwing first (table_prefetch_past_row).
TEST(KillMatrix, RecordsTheShrunkCaseItsReproduceStringReplays) {
  KillOptions options = options_for("replay");
  options.mutants = {"acc_not_rescaled", "masked_v_not_zeroed", "table_prefetch_past_row"};
  const KillMatrix matrix = run_kill_matrix(options);
  int replayed = 0;
  bool saw_illegal_address = false;
  for (const KillCell& c : matrix.cells) {
    if (!c.killed) continue;
    saw_illegal_address |= c.failure.find("illegal address") != std::string::npos;
    const KillCell again = replay_kill(c, options);
    EXPECT_TRUE(again.killed) << c.replay;
    EXPECT_EQ(again.shrunk_case, c.shrunk_case) << c.mutant << " / " << c.property << ": " << c.replay;
    EXPECT_EQ(again.shrunk_size, c.shrunk_size) << c.mutant << " / " << c.property;
    ++replayed;
  }
  EXPECT_GE(replayed, 6);
  EXPECT_TRUE(saw_illegal_address) << "no kill went through a throwing mutant";
  const KillCell* masked = cell_of(matrix, "masked_v_not_zeroed", "MaskedLanesZeroWeight");
  ASSERT_NE(masked, nullptr);
  EXPECT_TRUE(masked->killed);
}

TEST(KillMatrix, SameSeedGivesTheSameMatrix) {
  KillOptions options = options_for("same-seed");
  options.mutants = {"causal_off_by_one", "splitk_drops_last_split"};
  options.cases = 30;  // both die well before; surviving cells cost a full run each
  const KillMatrix a = run_kill_matrix(options);
  const KillMatrix b = run_kill_matrix(options);
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (std::size_t i = 0; i < a.cells.size(); ++i) {
    SCOPED_TRACE(a.cells[i].mutant + " / " + a.cells[i].property);
    EXPECT_EQ(a.cells[i].killed, b.cells[i].killed);
    EXPECT_EQ(a.cells[i].cases_to_kill, b.cells[i].cases_to_kill);
    EXPECT_EQ(a.cells[i].shrunk_case, b.cells[i].shrunk_case);
    EXPECT_EQ(a.cells[i].replay, b.cells[i].replay);
  }
  const nlohmann::json json = to_json(a);
  EXPECT_EQ(json["cells"].size(), a.mutants.size() * a.properties.size());
  EXPECT_EQ(json["properties"].size(), catalogue().size());
  EXPECT_EQ(json["summary"]["killed_mutants"], 2);
}

TEST(KillMatrix, UnknownMutantIsAClearError) {
  KillOptions options = options_for("unknown");
  const auto refusal = [&] {
    return testing::thrown_message<std::invalid_argument>([&] { run_kill_matrix(options); });
  };
  options.mutants = {"no_such_mutant"};
  const std::string unknown = refusal();
  EXPECT_TRUE(testing::contains(unknown, "'no_such_mutant'"));
  EXPECT_TRUE(testing::contains(unknown, "acc_not_rescaled")) << "should list the mutants";
  options.mutants = {"cpu_streaming"};
  EXPECT_TRUE(testing::contains(refusal(), "not a mutant")) << "a correct variant was accepted as a mutant";
}

// A mutant claims its correct counterpart's capabilities (but is_mutant), and only kill runs see it.
TEST(Mutants, DeclareTheirCounterpartsPromisesAndStayOutOfOrdinaryRuns) {
  const std::vector<const Variant*> all = Registry::instance().mutants();
  ASSERT_GE(all.size(), 15u);
  for (const Variant* v : Registry::instance().variants()) EXPECT_FALSE(v->capabilities().is_mutant) << v->name();
  for (const Variant* v : all) {
    const auto* mutant = dynamic_cast<const mutants::Mutant*>(v);
    ASSERT_NE(mutant, nullptr) << v->name() << " is registered as a mutant but is no mutants::Mutant";
    SCOPED_TRACE(v->name());
    const Capabilities mine = mutant->capabilities();
    const Capabilities claimed = mutant->counterpart().capabilities();
    EXPECT_TRUE(mine.is_mutant);
    EXPECT_EQ(mine.dtypes, claimed.dtypes);
    EXPECT_EQ(mine.modes, claimed.modes);
    EXPECT_EQ(mine.max_head_dim, claimed.max_head_dim);
    EXPECT_EQ(mine.deterministic, claimed.deterministic);
    EXPECT_EQ(mine.batch_invariant, claimed.batch_invariant);
    EXPECT_EQ(mine.uses_splits, claimed.uses_splits);
    EXPECT_EQ(mine.needs_gpu, claimed.needs_gpu);
    const LogitOptionSupport options = mine.logit_options;
    EXPECT_TRUE(options.soft_cap && options.window && options.alibi && options.sinks)
        << "the meta-kernel computes every logit option";
    EXPECT_EQ(mine.fp8_caches, claimed.fp8_caches) << "the meta-kernel reads every fp8 cache";
    EXPECT_NE(mutant->bug(), mutants::Bug::none);
  }
}

// With Bug::none each kernel of the meta-kernel is its correct counterpart bit for bit on every kind of draw (logit
// options and fp8 caches included): a mutant is a correct kernel plus exactly its bug.
RC_GTEST_PROP(MutantKernels, WithoutTheirBugAreBitIdenticalToTheCorrectKernels, ()) {
  gen::Limits limits;
  limits.logit_options = LogitOptionSupport::all();
  limits.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  const ProblemSpec spec = *gen::problem_spec(limits);
  const Problem problem = materialize(spec);
  const Knobs knobs = *gen::knobs(steps::longest_context(problem), limits);
  for (const mutants::Kernel kernel : mutants::kKernels) {
    const Output correct = Registry::instance().get(mutants::counterpart_name(kernel)).run(problem, knobs);
    RC_ASSERT(bit_identical(mutants::run_kernel(kernel, problem, knobs, mutants::Bug::none), correct));
  }
}

TEST(MutantKernels, ApproximateExpHasAboutAThousandthRelativeError) {
  double worst = 0;
  for (float x = -80.0f; x <= 80.0f; x += 0.0137f)
    worst = std::max(worst, std::fabs(mutants::approximate_expf(x) / std::exp(static_cast<double>(x)) - 1));
  EXPECT_GT(worst, 1e-3);
  EXPECT_LT(worst, 2e-3);
  EXPECT_EQ(mutants::approximate_expf(-INFINITY), 0.0f);
}

}  // namespace
}  // namespace pacheck
