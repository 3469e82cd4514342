#include "reports/ulp_json.h"

#include <cmath>

namespace pacheck::reports {

nlohmann::json json_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

namespace {

using nlohmann::json;

json histogram_counts(const UlpHistogram& h) {
  json counts = json::array();
  for (int bin = 0; bin < UlpHistogram::kBins; ++bin) counts.push_back(h.count(bin));
  return counts;
}

json guarantee_json(const GuaranteeCheck& g) {
  return {{"property", g.property},
          {"status", status_name(g.status)},
          {"cases", g.cases},
          {"failed_cells", g.failed_cells}};
}

json worst_case_json(const WorstCaseFile& w) {
  return {{"property", w.property},
          {"file", w.file.generic_string()},
          {"replay", w.replay},
          {"element", w.position},
          {"exact", json_number(w.element.exact)},
          {"rounded_exact", json_number(w.element.rounded_exact)},
          {"got", json_number(w.element.got)},
          {"error", json_number(w.element.error)},
          {"bound", json_number(w.element.bound)},
          {"ulps", json_number(w.element.ulps)},
          {"normalized_error", json_number(w.element.normalized())}};
}

json cell_json(const CellReport& c) {
  json properties = json::array();
  for (const PropertyOutcome& p : c.properties) {
    json entry = {{"name", p.property}, {"verdict", verdict_name(p.verdict)}, {"cases", p.cases},
                  {"failed_cases", p.failed_cases}};
    if (p.verdict != Verdict::passed) entry["failure"] = p.failure;
    if (!p.replay.empty()) entry["replay"] = p.replay;
    properties.push_back(entry);
  }
  return {{"dtype", dtype_name(c.dtype)},
          {"mode", mode_name(c.mode)},
          {"verdict", c.passed() ? "pass" : "fail"},
          {"cases", c.cases},
          {"compared_outputs", c.compared_outputs},
          {"elements", c.elements},
          {"seconds", c.seconds},
          {"ulps", {{"median", json_number(c.median_ulps)}, {"p99", json_number(c.p99_ulps)}, {"worst", json_number(c.worst_ulps)}}},
          {"worst_normalized_error", json_number(c.worst_normalized)},
          {"tightness",
           {{"median", json_number(c.tightness_median)},
            {"p99", json_number(c.tightness_p99)},
            {"worst", json_number(c.worst_normalized)}}},
          {"histogram", histogram_counts(c.histogram)},
          {"worst_case", c.worst ? worst_case_json(*c.worst) : json(nullptr)},
          {"properties", properties}};
}

json variant_json(const VariantReport& v) {
  const Capabilities& caps = v.capabilities;
  json dtypes = json::array();
  for (DType d : caps.dtypes) dtypes.push_back(dtype_name(d));
  json modes = json::array();
  for (Mode m : caps.modes) modes.push_back(mode_name(m));
  json cells = json::array();
  for (const CellReport& c : v.cells) cells.push_back(cell_json(c));
  json histograms = json::object();
  for (DType d : caps.dtypes)
    if (!v.skipped) histograms[std::string(dtype_name(d))] = histogram_counts(v.histogram(d));
  return {{"name", v.name},
          {"description", v.description},
          {"mutant", caps.is_mutant},
          {"needs_gpu", caps.needs_gpu},
          {"status", v.skipped ? "skipped" : "ran"},
          {"skip_reason", v.skipped ? json(v.skip_reason) : json(nullptr)},
          {"verdict", v.skipped ? "skipped" : (v.passed() ? "pass" : "fail")},
          {"cases", v.cases()},
          {"declared",
           {{"dtypes", dtypes},
            {"modes", modes},
            {"max_head_dim", caps.max_head_dim},
            {"deterministic", caps.deterministic},
            {"batch_invariant", caps.batch_invariant},
            {"uses_splits", caps.uses_splits}}},
          {"observed", {{"deterministic", guarantee_json(v.determinism)}, {"batch_invariant", guarantee_json(v.batch_isolation)}}},
          {"cells", cells},
          {"histograms", histograms}};
}

json environment_json(const Environment& e) {
  return {{"git_revision", e.git_revision},
          {"git_dirty", e.git_dirty},
          {"compiler", e.compiler},
          {"build_type", e.build_type},
          {"cuda_available", e.cuda_available},
          {"cuda_device", e.cuda_device},
          {"hardware_threads", e.hardware_threads}};
}

}  // namespace

json to_json(const Report& r) {
  json bins = json::array();
  for (int bin = 0; bin < UlpHistogram::kBins; ++bin) bins.push_back(UlpHistogram::label(bin));
  json variants = json::array();
  int ran = 0;
  int skipped = 0;
  for (const VariantReport& v : r.variants) {
    variants.push_back(variant_json(v));
    (v.skipped ? skipped : ran) += 1;
  }
  json kill;
  if (r.kill_matrix) {
    kill = to_json(*r.kill_matrix);
    kill["seconds"] = r.kill_matrix_seconds;
  } else {
    kill = {{"absent", r.kill_matrix_note}};
  }
  json coverage;
  if (r.coverage) {
    coverage = to_json(*r.coverage);
    coverage["html"] = r.coverage_html.empty() ? json(nullptr) : json(r.coverage_html);
  } else {
    coverage = {{"absent", r.coverage_note}};
  }
  return {{"schema", "pacheck.ulp-report"},
          {"schema_version", kUlpJsonSchemaVersion},
          {"generated_at", r.environment.generated_at},
          {"command_line", r.environment.command_line},
          {"settings", {{"cases_per_property", r.cases_per_property}, {"seed", r.seed}, {"kill_cases", r.kill_cases}}},
          {"environment", environment_json(r.environment)},
          {"summary",
           {{"variants_run", ran},
            {"variants_skipped", skipped},
            {"non_mutants_passed", r.non_mutants_passed()},
            {"seconds", r.seconds}}},
          {"histogram_bins", bins},
          {"variants", variants},
          {"kill_matrix", kill},
          {"coverage", coverage}};
}

}  // namespace pacheck::reports
