// ulp.json (report_files.h): the report as JSON, and the comparison of two reports' JSON.
#include "reports/report_files.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace pacheck::reports {

nlohmann::json json_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

namespace {

using nlohmann::json;

json histogram_counts(const Log2Histogram& h) {
  json counts = json::array();
  for (int bin = 0; bin < h.bins(); ++bin) counts.push_back(h.count(bin));
  return counts;
}

json histogram_labels(const Log2Histogram& h) {
  json labels = json::array();
  for (int bin = 0; bin < h.bins(); ++bin) labels.push_back(h.label(bin));
  return labels;
}

json spread(double median, double p99, double worst) {
  return {{"median", json_number(median)}, {"p99", json_number(p99)}, {"worst", json_number(worst)}};
}

json bucket_json(const std::string& label, const BucketStatistics& stats) {
  return {{"bucket", label},
          {"elements", stats.elements},
          {"error_over_bound_median_at_most", json_number(stats.normalized.quantile_at_most(0.5))},
          {"error_over_bound_p99_at_most", json_number(stats.normalized.quantile_at_most(0.99))},
          {"worst_error_over_bound", json_number(stats.worst_normalized)},
          {"worst_ulps", json_number(stats.worst_scaled_ulps)}};
}

json breakdown_json(const ShapeBreakdown& b) {
  json out = json::object();
  for (int d = 0; d < ShapeBreakdown::kDimensionCount; ++d) {
    json buckets = json::array();
    for (const auto& [bucket, stats] : b.dimensions[d]) buckets.push_back(bucket_json(ShapeBreakdown::bucket_label(bucket), stats));
    out[ShapeBreakdown::kDimensions[d]] = buckets;
  }
  json features = json::array();
  for (const auto& [names, stats] : b.features) features.push_back(bucket_json(names, stats));
  out["features"] = features;
  return out;
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
          {"scale", json_number(w.element.scale)},
          {"exact", json_number(w.element.exact)},
          {"rounded_exact", json_number(w.element.rounded_exact)},
          {"got", json_number(w.element.got)},
          {"error", json_number(w.element.error)},
          {"bound", json_number(w.element.bound)},
          {"ulps", json_number(w.element.scaled_ulps)},
          {"raw_ulps", json_number(w.element.ulps)},
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
          {"ulps", spread(c.median_ulps, c.p99_ulps, c.worst_ulps)},
          {"raw_ulps", spread(c.raw_median_ulps, c.raw_p99_ulps, c.raw_worst_ulps)},
          {"worst_normalized_error", json_number(c.worst_normalized)},
          {"tightness", spread(c.tightness_median, c.tightness_p99, c.worst_normalized)},
          {"histogram", histogram_counts(c.histogram)},
          {"error_over_bound_histogram", histogram_counts(c.ratio_histogram)},
          {"breakdown", breakdown_json(c.breakdown)},
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
  json ratio_histograms = json::object();
  for (DType d : caps.dtypes)
    if (!v.skipped) {
      histograms[std::string(dtype_name(d))] = histogram_counts(v.histogram(d));
      ratio_histograms[std::string(dtype_name(d))] = histogram_counts(v.ratio_histogram(d));
    }
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
          {"histograms", histograms},
          {"error_over_bound_histograms", ratio_histograms}};
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

json comparison_json(const Comparison& c) {
  json variants = json::array();
  for (const VariantComparison& v : c.variants) {
    json cells = json::array();
    for (const CellComparison& cell : v.cells) {
      json figures = json::array();
      for (const FigureChange& f : cell.figures)
        figures.push_back({{"figure", f.figure},
                           {"before", json_number(f.before)},
                           {"after", json_number(f.after)},
                           {"worse", f.worse}});
      cells.push_back({{"dtype", cell.dtype},
                       {"mode", cell.mode},
                       {"verdict_before", cell.verdict_before},
                       {"verdict_after", cell.verdict_after},
                       {"worse", cell.worse},
                       {"figures", figures}});
    }
    variants.push_back({{"before", v.before}, {"after", v.after}, {"worse", v.worse}, {"cells", cells}});
  }
  return {{"old_file", c.old_file},
          {"old_generated_at", c.old_generated_at},
          {"old_revision", c.old_revision},
          {"settings_note", c.settings_note},
          {"worse", c.worse()},
          {"variants", variants}};
}

}  // namespace

json to_json(const Report& r) {
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
          {"histogram_bins", histogram_labels(UlpHistogram())},
          {"error_over_bound_bins", histogram_labels(RatioHistogram())},
          {"variants", variants},
          {"kill_matrix", kill},
          {"coverage", coverage},
          {"comparison", r.comparison ? comparison_json(*r.comparison) : json(nullptr)}};
}

namespace {

// A figure read back from a cell of ulp.json: a number, or "inf", "-inf", "nan"; a missing figure reads as NaN.
double figure_at(const json& cell, const json::json_pointer& at) {
  const json j = cell.contains(at) ? cell.at(at) : json();
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

const json* find_variant(const json& report, const std::string& name) {
  for (const json& v : report.at("variants"))
    if (v.value("name", "") == name) return &v;
  return nullptr;
}

const json* find_cell(const json& variant, const std::string& dtype, const std::string& mode) {
  for (const json& c : variant.at("cells"))
    if (c.value("dtype", "") == dtype && c.value("mode", "") == mode) return &c;
  return nullptr;
}

// Worse: grew by more than a quarter and by more than the slack; or became non-finite.
bool got_worse(double before, double after, double slack) {
  if (std::isnan(after) || std::isinf(after)) return std::isfinite(before);
  if (std::isnan(before)) return false;
  return after > 1.25 * before && after - before > slack;
}

CellComparison compare_cells(const json* before, const json* after) {
  const json& any = after ? *after : *before;
  CellComparison c;
  c.dtype = any.value("dtype", "?");
  c.mode = any.value("mode", "?");
  c.verdict_before = before ? before->value("verdict", "?") : "absent";
  c.verdict_after = after ? after->value("verdict", "?") : "absent";
  if (!before || !after) return c;
  const std::tuple<const char*, const char*, double> figures[] = {{"error/bound median", "/tightness/median", 0.01},
                                                                   {"error/bound p99", "/tightness/p99", 0.01},
                                                                   {"error/bound worst", "/worst_normalized_error", 0.01},
                                                                   {"ulps median", "/ulps/median", 1},
                                                                   {"ulps p99", "/ulps/p99", 1},
                                                                   {"ulps worst", "/ulps/worst", 1}};
  for (const auto& [name, path, slack] : figures) {
    const json::json_pointer at(path);
    FigureChange& change = c.figures.emplace_back(FigureChange{name, figure_at(*before, at), figure_at(*after, at)});
    change.worse = got_worse(change.before, change.after, slack);
    c.worse = c.worse || change.worse;
  }
  c.worse = c.worse || (c.verdict_before == "pass" && c.verdict_after == "fail");
  return c;
}

VariantComparison compare_variants(const json* before, const json* after) {
  VariantComparison v;
  v.before = before ? before->value("name", "") : "";
  v.after = after ? after->value("name", "") : "";
  const json empty = {{"cells", json::array()}};
  const json& b = before ? *before : empty;
  const json& a = after ? *after : empty;
  for (const json& cell : a.at("cells")) {
    v.cells.push_back(compare_cells(find_cell(b, cell.value("dtype", ""), cell.value("mode", "")), &cell));
    v.worse = v.worse || v.cells.back().worse;
  }
  for (const json& cell : b.at("cells"))
    if (!find_cell(a, cell.value("dtype", ""), cell.value("mode", ""))) v.cells.push_back(compare_cells(&cell, nullptr));
  return v;
}

}  // namespace

json read_ulp_json(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "pacheck.ulp-report")
    throw std::runtime_error(file.string() + " is not a pacheck report's ulp.json");
  const int version = j.value("schema_version", 0);
  if (version != kUlpJsonSchemaVersion)
    throw std::runtime_error(file.string() + " has schema version " + std::to_string(version) + ", this pacheck writes " +
                             std::to_string(kUlpJsonSchemaVersion) +
                             " (its figures mean other things): make both reports with the same pacheck");
  if (!j.contains("variants") || !j["variants"].is_array())
    throw std::runtime_error(file.string() + " has no variants array");
  return j;
}

Comparison compare_reports(const json& before, const json& after, const std::map<std::string, std::string>& pairs,
                           const std::string& old_file) {
  Comparison c;
  c.old_file = old_file;
  c.old_generated_at = before.value("generated_at", "");
  c.old_revision = before.contains("environment") ? before["environment"].value("git_revision", "") : "";
  const json no_settings = json::object();
  const json& sb = before.contains("settings") ? before["settings"] : no_settings;
  const json& sa = after.contains("settings") ? after["settings"] : no_settings;
  for (const char* setting : {"cases_per_property", "seed"})
    if (sb.value(setting, json()) != sa.value(setting, json()))
      c.settings_note += std::string(c.settings_note.empty() ? "" : "; ") + setting + " " +
                         sb.value(setting, json()).dump() + " before, " + sa.value(setting, json()).dump() + " now";
  if (!c.settings_note.empty())
    c.settings_note = "the runs differ (" + c.settings_note +
                      "): their figures come from different cases, so small changes are noise";
  std::vector<std::string> matched;
  for (const json& v : after.at("variants")) {
    const std::string name = v.value("name", "");
    const auto paired = pairs.find(name);
    const std::string old_name = paired == pairs.end() ? name : paired->second;
    const json* old = find_variant(before, old_name);
    if (old) matched.push_back(old_name);
    c.variants.push_back(compare_variants(old, &v));
  }
  for (const json& v : before.at("variants"))
    if (std::find(matched.begin(), matched.end(), v.value("name", "")) == matched.end())
      c.variants.push_back(compare_variants(&v, nullptr));
  return c;
}

}  // namespace pacheck::reports
