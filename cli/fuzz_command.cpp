// pacheck fuzz --variant NAME --seconds N: the catalogue against one variant, round after round with fresh seeds,
// until the budget is spent; each failure saved as a case file and printed with its replay line. Exit status: 0
// clean, 1 a failure, 77 skipped (the variant needs a GPU and none answered).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "properties/catalogue.h"
#include "properties/fuzz_campaign.h"

namespace pacheck::cli {
namespace {

constexpr int kExitSkipped = 77;  // the automake / ctest convention for "did not run"

struct FuzzOptions {
  std::string variant;
  bool seed_given = false;
  std::string failure_dir = "pacheck-failures/fuzz";
  std::vector<std::string> plugins;
  FuzzCampaignOptions campaign;  // the other options set its fields
};

// On a terminal the progress line rewrites itself every second; in a log, a line every ten seconds.
class ProgressLine {
 public:
  ProgressLine(std::string variant, double budget) : variant_(std::move(variant)), budget_(budget), tty_(::isatty(1)) {}

  void update(const FuzzProgress& p) {
    if (!tty_ && p.elapsed_seconds < next_log_) return;
    next_log_ = p.elapsed_seconds + 10;
    std::printf("%s[%4.0fs/%.0fs] %s: %lld cases, %.1f cases/s, %d failure%s%s", tty_ ? "\r" : "", p.elapsed_seconds,
                budget_, variant_.c_str(), p.cases, p.cases_per_second(), p.failures, p.failures == 1 ? "" : "s",
                tty_ ? "   " : "\n");
    std::fflush(stdout);
    open_ = tty_;
  }
  // Ends a rewritten line before other output.
  void interrupt() {
    if (open_) std::printf("\n");
    open_ = false;
  }

 private:
  std::string variant_;
  double budget_;
  bool tty_;
  bool open_ = false;
  double next_log_ = 0;
};

void print_failure(const FuzzFailure& f, const std::string& variant, const std::string& program) {
  const std::string message = with_plugin_arguments(f.message, variant);
  std::cout << "\nFAILURE: " << f.property << " on " << variant << ", seed " << f.seed << "\n" << message;
  if (!message.empty() && message.back() != '\n') std::cout << "\n";
  for (const auto& file : f.case_files) {
    const std::string replay = program + " replay " + file.string() + " --variant " + variant + plugin_arguments(variant);
    std::cout << "saved: " << file.string() << "\n";
    if (message.find(replay) == std::string::npos) std::cout << "replay: " << replay << "\n";
  }
  if (f.case_files.empty()) std::cout << "(no case file was saved for this failure)\n";
  if (!f.check_command.empty()) std::cout << "reproduce: " << with_plugin_arguments(f.check_command, variant) << "\n";
  std::cout << std::endl;
}

void run_fuzz(FuzzOptions o, const std::string& program) {
  load_plugins(o.plugins);
  const Variant* variant = select_variants({o.variant}, /*include_mutants=*/true).front();
  FuzzCampaignOptions& campaign = o.campaign;
  if (!o.seed_given) campaign.seed = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  campaign.variant = variant;
  campaign.failure_dir = o.failure_dir;
  campaign.replay_program = program;
  campaign.gpu_available = cuda_device_available;

  std::string properties;
  for (const Property& p : catalogue())
    if (p.applies(variant->capabilities())) properties += (properties.empty() ? "" : ", ") + p.name;
  std::cout << "fuzzing " << variant->name() << (variant->capabilities().is_mutant ? " (a mutant)" : "") << " for "
            << campaign.seconds << " s with " << campaign.jobs << " job" << (campaign.jobs == 1 ? "" : "s") << ", seed "
            << campaign.seed << " (--seed " << campaign.seed << " repeats these rounds), " << campaign.cases_per_round
            << " cases per round over: " << properties << "\n"
            << "failures are saved under " << o.failure_dir << "/seed-<S>/" << std::endl;

  ProgressLine line(variant->name(), campaign.seconds);
  FuzzReport report;
  try {
    report = run_fuzz_campaign(
        campaign, [&](const FuzzProgress& p) { line.update(p); },
        [&](const FuzzFailure& f) {
          line.interrupt();
          print_failure(f, variant->name(), program);
        });
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("fuzz", e.what());
  }
  line.interrupt();
  if (report.skipped) {
    std::cout << variant->name() << " needs a GPU, and none is available: " << report.skip_reason
              << "\nskipped: nothing was fuzzed\n";
    set_exit_code(kExitSkipped);
    return;
  }
  const FuzzProgress& t = report.totals;
  std::printf("\nfuzz %s: %lld cases in %.1f s (%.1f cases/s) over %lld rounds, %d job%s, %d failure%s\n",
              variant->name().c_str(), t.cases, t.elapsed_seconds, t.cases_per_second(), t.rounds, campaign.jobs,
              campaign.jobs == 1 ? "" : "s", t.failures, t.failures == 1 ? "" : "s");
  for (const auto& [property, cases] : report.cases_per_property) {
    const auto gave_up = report.gave_up_rounds.find(property);
    std::printf("  %-24s %8lld cases%s\n", property.c_str(), cases,
                gave_up == report.gave_up_rounds.end()
                    ? ""
                    : (" (RapidCheck gave up on " + std::to_string(gave_up->second) + " rounds: too many discarded cases)").c_str());
  }
  if (t.failures > 0)
    std::printf("FAIL: %d failure%s saved under %s\n", t.failures, t.failures == 1 ? "" : "s", o.failure_dir.c_str());
  std::fflush(stdout);
  set_exit_code(t.failures > 0 ? 1 : 0);
}

}  // namespace

void add_fuzz_command(CLI::App& app) {
  auto options = std::make_shared<FuzzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz", "Run the property catalogue against one variant with fresh seeds for a time budget (exit 1 on a failure)");
  cmd->add_option("--variant", options->variant, "The variant to fuzz (mutants and CUDA variants included)")->required();
  cmd->add_option("--seconds", options->campaign.seconds, "Time budget in seconds")
      ->required()
      ->check(finite_number(0.001, 1e7))
      ->default_str("");  // required: no default to show
  cmd->add_option("--seed", options->campaign.seed, "First seed (default: random, printed so the run can be repeated)")
      ->check(whole_number(0, UINT64_MAX))
      ->default_str("random")
      ->each([options](const std::string&) { options->seed_given = true; });
  cmd->add_option("--jobs", options->campaign.jobs, "Worker processes")->check(whole_number(1, 256));
  cmd->add_option("--failures", options->failure_dir, "Folder for the case files of failures");
  cmd->add_option("--cases-per-round", options->campaign.cases_per_round, "Cases per property run (one seed)")
      ->check(whole_number(1, 100000));
  cmd->add_flag("--keep-going", options->campaign.keep_going, "Continue after a failure until the budget is spent");
  cmd->add_flag("--engine-shapes", options->campaign.engine_shapes,
                "Draw only serving-engine shapes (see pacheck check --engine-shapes)");
  add_pin_options(cmd, options->campaign.pins);
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options, cmd] { run_fuzz(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
