// pacheck check: runs the property catalogue over every selected variant and prints, per variant, the cases run,
// the worst error in ulps and in bound units, and pass or fail. Failures print the shrunk case and how to replay it.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "properties/runner.h"

namespace pacheck::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> variants;
  std::vector<std::string> properties;
  int cases = 100;
  std::uint64_t seed = 1;
  std::string failure_dir = "pacheck-failures";
  std::string reproduce;
};

struct VariantSummary {
  int cases = 0;
  double worst_ulps = 0;
  double worst_normalized = 0;
  bool passed = true;
  int skipped_properties = 0;
};

void run_check(const CheckOptions& o, const std::string& program) {
  std::vector<const Property*> properties;
  if (o.properties.empty())
    for (const Property& p : catalogue()) properties.push_back(&p);
  for (const std::string& name : o.properties) {
    try {
      properties.push_back(&property_named(name));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--property", e.what());
    }
  }
  std::string gpu_reason;
  const bool gpu = gpu_available(&gpu_reason);
  std::map<std::string, VariantSummary> summaries;
  bool all_passed = true;
  for (const Variant* v : select_variants(o.variants)) {
    VariantSummary& s = summaries[v->name()];
    if (v->capabilities().needs_gpu && !gpu) {
      std::cout << v->name() << ": skipped, " << gpu_reason << "\n";
      s.skipped_properties = static_cast<int>(properties.size());
      continue;
    }
    for (const Property* property : properties) {
      if (!property->applies(v->capabilities())) continue;
      RunOptions options;
      options.cases = o.cases;
      options.seed = o.seed;
      options.failure_dir = o.failure_dir;
      options.replay_program = program;
      if (!o.reproduce.empty()) options.reproduce = o.reproduce;
      const PropertyRun run = run_property(*property, *v, options, [&](const CaseObservation& c) {
        if (!c.agreement) return;
        s.worst_ulps = std::max(s.worst_ulps, c.agreement->worst_ulps);
        s.worst_normalized = std::max(s.worst_normalized, c.agreement->worst.normalized());
      });
      s.cases += run.cases + (run.passed ? 0 : 1);
      std::printf("  %-22s %-16s %6d cases  %s\n", property->name.c_str(), v->name().c_str(), run.cases,
                  run.passed ? "pass" : (run.gave_up ? "GAVE UP" : "FAIL"));
      std::fflush(stdout);
      if (!run.passed) {
        s.passed = false;
        all_passed = false;
        std::cout << run.failure << "\n";
        if (!run.reproduce.empty())
          std::cout << "reproduce: " << program << " check --variant " << v->name() << " --property "
                    << property->name << " --seed " << o.seed << " --reproduce " << run.reproduce << "\n\n";
      }
    }
  }
  std::printf("\n%-20s %8s %12s %14s  %s\n", "variant", "cases", "worst ulps", "worst/bound", "verdict");
  for (const auto& [name, s] : summaries) {
    if (s.skipped_properties > 0 && s.cases == 0) {
      std::printf("%-20s %8s %12s %14s  %s\n", name.c_str(), "-", "-", "-", "skipped (no GPU)");
      continue;
    }
    std::printf("%-20s %8d %12.3g %14.3g  %s\n", name.c_str(), s.cases, s.worst_ulps, s.worst_normalized,
                s.passed ? "pass" : "FAIL");
  }
  set_exit_code(all_passed ? 0 : 1);
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "Run the property catalogue over the variants and print a summary");
  cmd->add_option("--variant", options->variants, "Variant(s) to check (default: every non-mutant variant)");
  cmd->add_option("--property", options->properties, "Properties to run (default: the whole catalogue)");
  cmd->add_option("--cases", options->cases, "Cases per property")->check(CLI::Range(1, 100000000));
  cmd->add_option("--seed", options->seed, "RapidCheck seed");
  cmd->add_option("--failures", options->failure_dir, "Folder for the case files of failures");
  cmd->add_option("--reproduce", options->reproduce, "Re-run the failing case of a reproduce string");
  const std::string program = app.get_name().empty() ? "pacheck" : app.get_name();
  cmd->callback([options, cmd] { run_check(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
