// pacheck check: the property catalogue over the selected variants; per variant the cases, worst ulps, worst
// error/bound and verdict, and per failure the shrunk case and its replay line. With a plugin variant selected, each
// (property, variant) pair runs in a child process, so a plugin that crashes is reported with the problem it ran.
#include <sys/wait.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "plugin/plugin_loader.h"
#include "properties/fuzz_campaign.h"
#include "properties/runner.h"

namespace pacheck {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PropertyRun, property, variant, passed, gave_up, cases, failure, reproduce)
}  // namespace pacheck

namespace pacheck::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> variants;
  std::vector<std::string> properties;
  RunOptions run;  // --cases, --seed, --engine-shapes and the pins set its fields
  std::string failure_dir = "pacheck-failures";
  std::string reproduce;
  std::vector<std::string> plugins;
};

// Per variant and dtype: how close the variant came to the oracle, in ulps and in units of its own bound.
struct DTypeSummary {
  long long compared_cases = 0;  // with the oracle (invariance properties compare runs instead)
  double worst_ulps = 0;
  double worst_normalized = 0;
  void add(long long compared, double ulps, double normalized) {
    compared_cases += compared;
    worst_ulps = std::max(worst_ulps, ulps);
    worst_normalized = std::max(worst_normalized, normalized);
  }
};

struct VariantSummary {
  int cases = 0;
  bool passed = true;
  int skipped_properties = 0;
  std::map<DType, DTypeSummary> by_dtype;
  std::vector<std::string> failed_properties;
};

// One (property, variant) pair's run.
struct PairOutcome {
  PropertyRun run;
  std::map<DType, DTypeSummary> by_dtype;
  std::string crash;                 // when the child process died: what happened
  std::filesystem::path crash_case;  // and the problem it died on
};

PairOutcome run_pair(const CheckOptions& o, const Property& property, const Variant& v, const std::string& program) {
  RunOptions options = o.run;
  options.failure_dir = o.failure_dir;
  options.replay_program = program;
  if (!o.reproduce.empty()) options.reproduce = o.reproduce;
  PairOutcome out;
  out.run = run_property(property, v, options, [&](const CaseObservation& c) {
    if (c.agreement) out.by_dtype[c.problem.dtype].add(1, c.agreement->worst_ulps, c.agreement->worst.normalized());
  });
  return out;
}

// A pair's outcome as the child sends it to the parent (doubles as their bits: they may be infinite).
std::string encode(const PairOutcome& o) {
  nlohmann::json dtypes = nlohmann::json::array();
  for (const auto& [dtype, d] : o.by_dtype)
    dtypes.push_back({{"dtype", std::string(dtype_name(dtype))},
                      {"compared", d.compared_cases},
                      {"worst_ulps", std::bit_cast<std::uint64_t>(d.worst_ulps)},
                      {"worst_normalized", std::bit_cast<std::uint64_t>(d.worst_normalized)}});
  return nlohmann::json{{"run", o.run}, {"dtypes", dtypes}}.dump();
}

PairOutcome decode(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (j.contains("error")) throw std::invalid_argument(j.at("error").get<std::string>());
  PairOutcome o;
  o.run = j.at("run").get<PropertyRun>();
  for (const nlohmann::json& d : j.at("dtypes")) {
    DTypeSummary& s = o.by_dtype[*parse_dtype(d.at("dtype").get<std::string>())];
    s.compared_cases = d.at("compared").get<long long>();
    s.worst_ulps = std::bit_cast<double>(d.at("worst_ulps").get<std::uint64_t>());
    s.worst_normalized = std::bit_cast<double>(d.at("worst_normalized").get<std::uint64_t>());
  }
  return o;
}

// The pair in a child process. A plugin variant there saves each problem before running it, so that when the
// plugin kills the process the parent keeps the problem it died on and says how to replay it.
PairOutcome run_pair_in_child(const CheckOptions& o, const Property& property, const Variant& v,
                              const std::string& program) {
  const LoadedPlugin* plugin = plugin_of(v.name());
  const std::filesystem::path in_flight = RecordingVariant::in_flight_path(o.failure_dir);
  std::error_code ec;
  std::filesystem::remove(in_flight, ec);
  const ChildRun child = run_in_child([&] {
    const RecordingVariant recording(v, o.failure_dir, property.name, /*record_every_run=*/plugin != nullptr);
    try {
      return encode(run_pair(o, property, recording, program));
    } catch (const std::invalid_argument& e) {
      return nlohmann::json{{"error", e.what()}}.dump();
    }
  });
  if (child.completed()) {
    std::filesystem::remove(in_flight, ec);
    return decode(child.result);
  }
  PairOutcome out;
  out.run.property = property.name;
  out.run.variant = v.name();
  const std::string who = plugin ? "plugin " + plugin->path : "variant " + v.name();
  const std::string where = " in " + v.name() + " on " + property.name;
  if (WIFSIGNALED(child.status))
    out.crash = who + " crashed (signal " + std::to_string(WTERMSIG(child.status)) + ")" + where + ": " +
                strsignal(WTERMSIG(child.status));
  else
    out.crash = who + " ended the process" + where + ": it " + describe_exit(child.status);
  std::string why;
  out.crash_case = RecordingVariant::keep_in_flight(o.failure_dir, property.name, v.name(), "crash", &why);
  if (out.crash_case.empty()) out.crash += "\n(" + why + ")";
  return out;
}

// Whether a CUDA device answers, asked in a child process when the parent must not initialise CUDA before it forks.
bool gpu_available_to_children(std::string* reason) {
  const ChildRun probe = run_in_child([] {
    std::string why;
    return cuda_device_available(&why) ? std::string("1") : "0" + why;
  });
  if (!probe.completed() || probe.result.empty()) {
    *reason = "the GPU probe " + describe_exit(probe.status);
    return false;
  }
  *reason = probe.result.substr(1);
  return probe.result[0] == '1';
}

void run_check(const CheckOptions& o, const std::string& program) {
  load_plugins(o.plugins);
  std::vector<const Property*> properties;
  if (o.properties.empty())
    for (const Property& p : catalogue()) properties.push_back(&p);
  for (const std::string& name : o.properties) {
    try {
      properties.push_back(&property_named(name));
    } catch (const std::invalid_argument& e) {
      std::vector<std::string> known;
      for (const Property& p : catalogue()) known.push_back(p.name);
      throw CLI::ValidationError("--property", e.what() + did_you_mean(name, known));
    }
  }
  const std::vector<const Variant*> variants = select_variants(o.variants);
  // A reproduce string re-runs its own (property, variant) pairs only; one naming no pair this command runs is
  // refused, as it would check nothing.
  std::vector<std::string> reproduce_pairs;
  const auto reproduced = [&reproduce_pairs](const std::string& id) {
    return std::find(reproduce_pairs.begin(), reproduce_pairs.end(), id) != reproduce_pairs.end();
  };
  if (!o.reproduce.empty()) {
    try {
      reproduce_pairs = reproduce_ids(o.reproduce);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--reproduce", e.what());
    }
    bool any = false;
    std::string runs;
    for (const Variant* v : variants)
      for (const Property* property : properties)
        if (property->applies(v->capabilities())) {
          const std::string id = property_run_id(property->name, v->name());
          any = any || reproduced(id);
          if (runs.size() < 300) runs += (runs.empty() ? "" : ", ") + id;
        }
    if (!any) {
      std::string wanted;
      for (const std::string& id : reproduce_pairs) wanted += (wanted.empty() ? "" : ", ") + id;
      throw CLI::ValidationError("--reproduce", "the string reproduces " + wanted + ", which this command does not run (" +
                                                    (runs.empty() ? "nothing" : runs) +
                                                    "); give it the --variant and --property of its reproduce line");
    }
  }
  const bool in_children =
      std::any_of(variants.begin(), variants.end(), [](const Variant* v) { return plugin_of(v->name()) != nullptr; });
  std::string gpu_reason;
  const bool gpu = in_children ? gpu_available_to_children(&gpu_reason) : cuda_device_available(&gpu_reason);
  std::map<std::string, VariantSummary> summaries;
  bool all_passed = true;
  for (const Variant* v : variants) {
    VariantSummary& s = summaries[v->name()];
    if (v->capabilities().needs_gpu && !gpu) {
      if (gpu_required()) {  // PACHECK_REQUIRE_GPU=1: a missing GPU fails the run instead of skipping it
        std::cout << v->name() << ": FAIL, PACHECK_REQUIRE_GPU=1 but " << gpu_reason << "\n";
        s.passed = false;
        all_passed = false;
        continue;
      }
      std::cout << v->name() << ": skipped, " << gpu_reason << "\n";
      s.skipped_properties = static_cast<int>(properties.size());
      continue;
    }
    for (const Property* property : properties) {
      if (!property->applies(v->capabilities())) continue;
      if (!o.reproduce.empty() && !reproduced(property_run_id(property->name, v->name()))) continue;
      PairOutcome outcome;
      try {
        outcome = in_children ? run_pair_in_child(o, *property, *v, program) : run_pair(o, *property, *v, program);
      } catch (const std::invalid_argument& e) {  // a reproduce string that is not one
        throw CLI::ValidationError("--reproduce", e.what());
      }
      const PropertyRun& run = outcome.run;
      for (const auto& [dtype, d] : outcome.by_dtype)
        s.by_dtype[dtype].add(d.compared_cases, d.worst_ulps, d.worst_normalized);
      s.cases += run.cases + (run.passed ? 0 : 1);
      const bool crashed = !outcome.crash.empty();
      std::printf("  %-22s %-16s %6d cases  %s\n", property->name.c_str(), v->name().c_str(), run.cases,
                  crashed ? "CRASH" : run.passed ? "pass" : (run.gave_up ? "GAVE UP" : "FAIL"));
      std::fflush(stdout);
      if (!run.passed) {
        s.passed = false;
        s.failed_properties.push_back(property->name);
        all_passed = false;
        if (crashed) {
          std::cout << outcome.crash << "\n";
          if (!outcome.crash_case.empty())
            std::cout << "saved: " << outcome.crash_case.string() << "\nreplay: " << program << " replay "
                      << outcome.crash_case.string() << " --variant " << v->name() << plugin_arguments(v->name())
                      << "\n\n";
          continue;
        }
        std::cout << with_plugin_arguments(run.failure, v->name()) << "\n";
        if (!run.reproduce.empty())
          std::cout << "reproduce: " << program << " check --variant " << v->name() << plugin_arguments(v->name())
                    << " --property " << property->name << " --seed " << o.run.seed
                    << (o.run.engine_shapes ? " --engine-shapes" : "") << pin_arguments(o.run.pins) << " --reproduce "
                    << run.reproduce << "\n\n";
      }
    }
  }
  // worst/bound: the largest |variant - exact| / bound seen (1 = at the bound); near 1/2 to 1 in fp16 and bf16,
  // whose final rounding dominates both (reports/README.md).
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
  cmd->add_option("--cases", options->run.cases, "Cases per property")->check(whole_number(1, 100000000));
  cmd->add_option("--seed", options->run.seed, "RapidCheck seed")->check(whole_number(0, UINT64_MAX));
  cmd->add_option("--failures", options->failure_dir, "Folder for the case files of failures");
  cmd->add_option("--reproduce", options->reproduce, "Re-run the failing case of a reproduce string");
  cmd->add_flag("--engine-shapes", options->run.engine_shapes,
                "Draw only serving-engine shapes: bf16 or fp16, real head dims, block sizes 16/32/64, tiles and splits "
                "in multiples of 16 (where the CUDA kernels' tensor copies run)");
  add_pin_options(cmd, options->run.pins);
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options, cmd] { run_check(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
