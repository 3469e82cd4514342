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
  bool engine_shapes = false;
  KernelPins pins;
};

// Per variant and dtype: how close the variant came to the oracle, in ulps and in units of its own bound.
struct DTypeSummary {
  long long compared_cases = 0;  // cases compared with the oracle (invariance properties compare runs instead)
  double worst_ulps = 0;
  double worst_normalized = 0;
};

struct VariantSummary {
  int cases = 0;
  bool passed = true;
  int skipped_properties = 0;
  std::map<DType, DTypeSummary> by_dtype;
  std::vector<std::string> failed_properties;
};

void run_check(const CheckOptions& o, const std::string& invoked_as) {
  const std::string& program = invoked_as;
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
      options.engine_shapes = o.engine_shapes;
      options.pins = o.pins;
      const PropertyRun run = run_property(*property, *v, options, [&](const CaseObservation& c) {
        if (!c.agreement) return;
        DTypeSummary& d = s.by_dtype[c.problem.dtype];
        ++d.compared_cases;
        d.worst_ulps = std::max(d.worst_ulps, c.agreement->worst_ulps);
        d.worst_normalized = std::max(d.worst_normalized, c.agreement->worst.normalized());
      });
      s.cases += run.cases + (run.passed ? 0 : 1);
      std::printf("  %-22s %-16s %6d cases  %s\n", property->name.c_str(), v->name().c_str(), run.cases,
                  run.passed ? "pass" : (run.gave_up ? "GAVE UP" : "FAIL"));
      std::fflush(stdout);
      if (!run.passed) {
        s.passed = false;
        s.failed_properties.push_back(property->name);
        all_passed = false;
        std::cout << run.failure << "\n";
        if (!run.reproduce.empty())
          std::cout << "reproduce: " << program << " check --variant " << v->name() << " --property "
                    << property->name << " --seed " << o.seed << (o.engine_shapes ? " --engine-shapes" : "")
                    << pin_arguments(o.pins) << " --reproduce " << run.reproduce << "\n\n";
      }
    }
  }
  // worst/bound: the largest |variant - exact| / bound seen (1 = at the bound). For fp16 and bf16 the final
  // rounding to the output dtype dominates both, so it sits near 1/2 to 1; fp32 shows the fp32 model's slack.
  std::printf("\n%-20s %6s %8s %9s %12s %12s  %s\n", "variant", "dtype", "cases", "compared", "worst ulps",
              "worst/bound", "verdict");
  for (const auto& [name, s] : summaries) {
    if (s.skipped_properties > 0 && s.cases == 0) {
      std::printf("%-20s %6s %8s %9s %12s %12s  %s\n", name.c_str(), "-", "-", "-", "-", "-", "skipped (no GPU)");
      continue;
    }
    std::string verdict = s.passed ? "pass" : "FAIL:";
    for (const std::string& p : s.failed_properties) verdict += " " + p;
    bool first = true;
    for (const auto& [dtype, d] : s.by_dtype) {
      std::printf("%-20s %6s %8s %9lld %12.3g %12.3g  %s\n", first ? name.c_str() : "",
                  std::string(dtype_name(dtype)).c_str(), first ? std::to_string(s.cases).c_str() : "",
                  d.compared_cases, d.worst_ulps, d.worst_normalized, first ? verdict.c_str() : "");
      first = false;
    }
    if (first) std::printf("%-20s %6s %8d %9s %12s %12s  %s\n", name.c_str(), "-", s.cases, "0", "-", "-", verdict.c_str());
  }
  const auto& registry = Registry::instance();
  std::printf("\nbatch-invariant and deterministic (declared; the BatchIsolation and Determinism properties check it):\n");
  for (const auto& [name, s] : summaries) {
    const Capabilities c = registry.get(name).capabilities();
    std::printf("  %-20s batch-invariant: %-3s deterministic: %s\n", name.c_str(), c.batch_invariant ? "yes" : "no",
                c.deterministic ? "yes" : "no");
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
  cmd->add_flag("--engine-shapes", options->engine_shapes,
                "Draw only serving-engine shapes: bf16, real head dims, block sizes 16/32/64, tiles and splits in "
                "multiples of 16 (where the CUDA kernels' tensor copies run)");
  add_pin_options(cmd, options->pins);
  cmd->callback([options, cmd] { run_check(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
