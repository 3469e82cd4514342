// index.html (report_files.h): one self-contained page, inline CSS and SVG, no script.
#include "reports/report_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pacheck::reports {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// A figure for a table cell: three significant digits, "inf" / "NaN" spelled out.
std::string figure(double value, const char* format = "%.3g") {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return printf_string(format, value);
}

// Error/bound ratios get four digits: 0.9998 (the final rounding used nearly all of the bound) is not 1.
std::string ratio(double value) { return figure(value, "%.4g"); }

// 1234567 -> "1,234,567"
std::string count(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string verdict_span(bool passed) {
  return passed ? "<span class=\"pass\">pass</span>" : "<span class=\"fail\">FAIL</span>";
}

// How close to its bound a figure is: green well inside, amber close, red beyond.
std::string ratio_class(double ratio) {
  if (!(ratio <= 1)) return "over";
  if (ratio > 0.5) return "near";
  return "";
}

// An error/bound figure's table cell, shaded by ratio_class; `title` a tooltip.
std::string ratio_cell(double value, const std::string& title = "") {
  return "<td class=\"" + ratio_class(value) + "\"" + (title.empty() ? "" : " title=\"" + title + "\"") + ">" +
         ratio(value) + "</td>";
}

// A histogram bar's class, from its elements' worst error / bound (what the verdict uses), never from its place on
// the ulp axis: far-off ulps of a cancelling output inside its bound are no alarm.
std::string bar_class(double worst_normalized) {
  if (std::isnan(worst_normalized) || std::isinf(worst_normalized)) return "b-nan";
  if (worst_normalized > 1) return "b-over";
  if (worst_normalized > 0.5) return "b-near";
  return "b-ok";
}

const char* kStyle = R"css(
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d2430;background:#f4f6f8}
header{background:#1d2430;color:#f4f6f8;padding:16px 28px}
header h1{margin:0 0 6px;font-size:22px}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0;font-size:13px}
header dt{color:#9fb0c3}header dd{margin:0}header code{background:#2c3646;color:#e6edf3}
nav{padding:8px 28px;background:#e8ecf1;border-bottom:1px solid #d3d9e0;font-size:13px}
nav a{margin-right:14px}
main{padding:4px 28px 40px}
section{background:#fff;border:1px solid #dbe0e6;border-radius:6px;padding:12px 18px;margin:16px 0}
h2{font-size:18px;margin:4px 0 8px}h3{font-size:15px;margin:14px 0 6px}
p.note{color:#4a5568;margin:4px 0 8px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid #e6e9ee;text-align:right;vertical-align:top}
th{background:#eef1f5;text-align:center;font-weight:600}
.l{text-align:left}
.pass{color:#1a7f37;font-weight:600}.fail{color:#c62828;font-weight:700}.skip{color:#6b7480}
td.near{background:#fff4d6}td.over{background:#ffd9d6;color:#8e1b12;font-weight:700}
td.worse,tr.worse th{background:#fbd0cb;color:#8e1b12;font-weight:700}
rect.b-ok{fill:#2e7d32}rect.b-near{fill:#f9a825}rect.b-over{fill:#c62828}rect.b-nan{fill:#6a1b9a}
code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#eef1f5;padding:1px 4px;border-radius:3px;word-break:break-all}
.hists{display:flex;flex-wrap:wrap;gap:10px}
.hists svg{background:#fbfcfd;border:1px solid #e3e7ec;border-radius:4px}
table.grid td,table.grid th{border:1px solid #fff;text-align:center;padding:2px 5px;min-width:26px}
table.grid th.v{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;padding:6px 2px;font-weight:500}
table.grid td.k1{background:#1b5e20;color:#fff}table.grid td.k2{background:#43a047;color:#fff}
table.grid td.k3{background:#a5d6a7}table.grid td.s{background:#f6e7e6;color:#b0625c}
table.grid th.dead{background:#e53935;color:#fff}table.grid td.zero{background:#e53935;color:#fff;font-weight:700}
table.grid td.na{background:#eceff1;color:#8a939d}
table.grid td.ok{background:#43a047;color:#fff}table.grid td.bad{background:#e53935;color:#fff;font-weight:700}
table.grid td.gu{background:#f9a825}
.legend span{display:inline-block;padding:0 6px;margin-right:6px;border-radius:3px;font-size:12px}
details{margin:6px 0}summary{cursor:pointer;color:#2b5a8a}
pre{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#f6f8fa;border:1px solid #e3e7ec;padding:8px;overflow-x:auto;white-space:pre-wrap}
.covbar{display:inline-block;height:9px;background:#dfe4ea;width:120px;vertical-align:middle;margin-right:6px;border-radius:2px}
.covbar i{display:block;height:9px;background:#43a047;border-radius:2px}
)css";

void header(std::ostream& out, const Report& r) {
  const Environment& e = r.environment;
  out << "<header><h1>pacheck report</h1><dl>"
      << "<dt>generated</dt><dd>" << html_escape(e.generated_at) << " in " << figure(r.seconds) << " s</dd>"
      << "<dt>revision</dt><dd><code>" << html_escape(e.git_revision) << "</code>"
      << (e.git_dirty ? " (with uncommitted changes)" : "") << "</dd>"
      << "<dt>compiler</dt><dd>" << html_escape(e.compiler)
      << (e.build_type.empty() ? "" : ", " + html_escape(e.build_type)) << "</dd>"
      << "<dt>CUDA device</dt><dd>" << html_escape(e.cuda_device) << "</dd>"
      << "<dt>run</dt><dd>" << r.cases_per_property << " cases per property per dtype and mode, seed " << r.seed
      << ", " << e.hardware_threads << " hardware threads</dd>"
      << "<dt>command</dt><dd><code>" << html_escape(e.command_line) << "</code></dd>"
      << "</dl></header>\n";
}

void navigation(std::ostream& out, const Report& r) {
  out << "<nav><a href=\"#summary\">summary</a>";
  if (r.comparison) out << "<a href=\"#comparison\">comparison</a>";
  for (const VariantReport& v : r.variants)
    out << "<a href=\"#v-" << html_escape(v.name) << "\">" << html_escape(v.name) << "</a>";
  out << "<a href=\"#kill-matrix\">kill matrix</a><a href=\"#coverage\">coverage</a>"
      << "<a href=\"ulp.json\">ulp.json</a></nav>\n";
}

std::string guarantee_text(bool declared, const GuaranteeCheck& g) {
  std::string text = declared ? "declared" : "not declared";
  switch (g.status) {
    case GuaranteeCheck::Status::held:
      return text + "; " + g.property + " held (" + std::to_string(g.cases) + " cases)";
    case GuaranteeCheck::Status::failed: {
      std::string cells;
      for (const std::string& c : g.failed_cells) cells += (cells.empty() ? "" : ", ") + c;
      return text + "; <span class=\"fail\">" + g.property + " failed</span> in " + html_escape(cells);
    }
    default:
      return text + "; " + g.property + " " + status_name(g.status);
  }
}

void summary(std::ostream& out, const Report& r) {
  out << "<section id=\"summary\"><h2>Summary</h2>"
      << "<p class=\"note\">One row per variant, over every dtype and mode it supports. Ulps are scaled: the "
         "distance from the correctly rounded answer in ulps of the element's scale (the magnitude of the terms its "
         "weighted sum adds up), so an output that cancels to nearly zero does not blow them up. Error/bound is the "
         "figure the verdict uses (above 1 the variant broke its error model). See reports/README.md for how to "
         "read each figure.</p>"
      << "<table><tr><th class=\"l\">variant</th><th>cells</th><th>cases</th><th>worst ulps</th>"
         "<th>worst error/bound</th><th class=\"l\">deterministic</th><th class=\"l\">batch-invariant</th>"
         "<th>verdict</th></tr>\n";
  for (const VariantReport& v : r.variants) {
    out << "<tr><td class=\"l\"><a href=\"#v-" << html_escape(v.name) << "\">" << html_escape(v.name) << "</a>"
        << (v.capabilities.is_mutant ? " <small>(mutant)</small>" : "") << "</td>";
    if (v.skipped) {
      out << "<td colspan=\"6\" class=\"l skip\">skipped: " << html_escape(v.skip_reason)
          << "</td><td class=\"skip\">skipped</td></tr>\n";
      continue;
    }
    const CellReport* worst = v.worst_cell();
    const double worst_ratio = worst ? worst->worst_normalized : 0;
    out << "<td>" << v.cells.size() << "</td><td>" << count(static_cast<std::uint64_t>(v.cases())) << "</td><td>"
        << figure(v.worst_ulps()) << "</td>" << ratio_cell(worst_ratio)
        << "<td class=\"l\">" << guarantee_text(v.capabilities.deterministic, v.determinism)
        << "</td><td class=\"l\">" << guarantee_text(v.capabilities.batch_invariant, v.batch_isolation)
        << "</td><td>" << verdict_span(v.passed()) << "</td></tr>\n";
  }
  out << "</table></section>\n";
}

void cell_table(std::ostream& out, const VariantReport& v) {
  out << "<table><tr><th>dtype</th><th>mode</th><th>cases</th><th>outputs</th><th>elements</th>"
         "<th>median ulps</th><th>p99 ulps</th><th>worst ulps</th><th>worst error/bound</th>"
         "<th>tightness median</th><th>tightness p99</th><th>verdict</th><th class=\"l\">worst case</th></tr>\n";
  for (const CellReport& c : v.cells) {
    out << "<tr><td>" << dtype_name(c.dtype) << "</td><td>" << mode_name(c.mode) << "</td><td>" << c.cases
        << "</td><td>" << count(c.compared_outputs) << "</td><td>" << count(c.elements) << "</td><td>"
        << figure(c.median_ulps) << "</td><td>" << figure(c.p99_ulps) << "</td><td>" << figure(c.worst_ulps) << "</td>"
        << ratio_cell(c.worst_normalized) << ratio_cell(c.tightness_median) << ratio_cell(c.tightness_p99) << "<td>"
        << verdict_span(c.passed()) << "</td><td class=\"l\">";
    if (c.worst) {
      out << "<a href=\"" << html_escape(c.worst->file.generic_string()) << "\">case file</a> ("
          << html_escape(c.worst->property) << ", " << html_escape(c.worst->position) << ")<br><code>"
          << html_escape(c.worst->replay) << "</code>";
    } else {
      out << "<span class=\"skip\">no output compared with the oracle</span>";
    }
    out << "</td></tr>\n";
  }
  out << "</table><p class=\"note\">Shaded: error/bound above 0.5 (amber) or above 1 (red, the bound was broken). "
         "fp16 and bf16 cells sit near 1 by construction: their final rounding dominates both the error and the "
         "bound, so read the fp32 cells for how tight the arithmetic's model is. Replay lines run from this "
         "report's folder.</p>\n";
}

bool declares(const VariantReport& v, DType d) {
  return std::find(v.capabilities.dtypes.begin(), v.capabilities.dtypes.end(), d) != v.capabilities.dtypes.end();
}

void histograms(std::ostream& out, const VariantReport& v) {
  out << "<h3>Histograms</h3><p class=\"note\">Per dtype, every mode together: scaled ulps, then error/bound. "
         "A bar's colour is the worst error/bound of its elements: green within half the bound, amber within it, "
         "red beyond it, purple non-finite.</p><div class=\"hists\">";
  for (DType d : kAllDTypes) {
    if (!declares(v, d)) continue;
    const std::string name = v.name + ", " + std::string(dtype_name(d)) + " (all modes)";
    out << histogram_svg(v.histogram(d), name + ", ulps", "ulps");
    out << histogram_svg(v.ratio_histogram(d), name + ", error/bound", "error/bound");
  }
  out << "</div>\n";
}

// Per shape dimension, a row per bucket: how its elements' error/bound and ulps spread.
void breakdown_tables(std::ostream& out, const VariantReport& v) {
  out << "<h3>By problem shape</h3><p class=\"note\">Every element of every mode, bucketed by the problem's head dim, "
         "block size and GQA ratio (query heads per KV head), by its row's context length, and by the serving "
         "features its problem uses (soft cap, window, ALiBi, sinks, fp8 cache; plain for none). Median and p99 "
         "error/bound are bin edges (at most); the worst is exact. A precision loss that grows with a shape shows "
         "as a trend down a column.</p><div class=\"hists\">";
  for (DType d : kAllDTypes) {
    if (!declares(v, d)) continue;
    const ShapeBreakdown b = v.breakdown(d);
    const auto table = [&](const std::string& dimension, const auto& buckets, const auto& label_of) {
      out << "<table><tr><th colspan=\"5\">" << dtype_name(d) << ": " << dimension
          << "</th></tr><tr><th>bucket</th><th>elements</th><th>error/bound median &le;</th><th>p99 &le;</th>"
             "<th>worst</th></tr>\n";
      for (const auto& [bucket, stats] : buckets) {
        const double median = stats.normalized.quantile_at_most(0.5);
        const double p99 = stats.normalized.quantile_at_most(0.99);
        out << "<tr><td>" << html_escape(label_of(bucket)) << "</td><td>" << count(stats.elements) << "</td>"
            << ratio_cell(median) << ratio_cell(p99)
            << ratio_cell(stats.worst_normalized, "worst ulps " + figure(stats.worst_scaled_ulps)) << "</tr>\n";
      }
      out << "</table>";
    };
    for (int dim = 0; dim < ShapeBreakdown::kDimensionCount; ++dim)
      table(ShapeBreakdown::kDimensions[dim], b.dimensions[dim], ShapeBreakdown::bucket_label);
    table("features", b.features, [](const std::string& names) { return names; });
  }
  out << "</div>\n";
}

// "fail, 2 of 3 cases failed"
std::string tally(const PropertyOutcome& o) {
  return std::string(verdict_name(o.verdict)) + ", " + std::to_string(o.failed_cases) + " of " +
         std::to_string(o.cases) + " cases failed";
}

void property_grid(std::ostream& out, const VariantReport& v) {
  if (v.cells.empty()) return;
  out << "<h3>Properties</h3><table class=\"grid\"><tr><th class=\"l\">property</th>";
  for (const CellReport& c : v.cells) out << "<th>" << dtype_name(c.dtype) << "<br>" << mode_name(c.mode) << "</th>";
  out << "</tr>\n";
  const std::vector<PropertyOutcome>& names = v.cells.front().properties;
  std::vector<std::pair<const CellReport*, const PropertyOutcome*>> failures;
  for (std::size_t p = 0; p < names.size(); ++p) {
    out << "<tr><th class=\"l\">" << html_escape(names[p].property) << "</th>";
    for (const CellReport& c : v.cells) {
      const PropertyOutcome& o = c.properties.at(p);
      const char* cls = o.verdict == Verdict::passed ? "ok" : (o.verdict == Verdict::gave_up ? "gu" : "bad");
      out << "<td class=\"" << cls << "\" title=\"" << html_escape(o.property) << ", " << dtype_name(c.dtype) << " "
          << mode_name(c.mode) << ": " << tally(o) << "\">";
      if (o.verdict == Verdict::passed)
        out << o.cases;
      else if (o.verdict == Verdict::failed)
        out << o.failed_cases << "/" << o.cases;
      else
        out << verdict_name(o.verdict);
      out << "</td>";
      if (o.verdict != Verdict::passed) failures.emplace_back(&c, &o);
    }
    out << "</tr>\n";
  }
  out << "</table><p class=\"note\">Each cell: the cases run when every one passed; failed/run when some failed "
         "(the report counts failures and runs on, so the figures above cover every case).</p>\n";
  for (const auto& [cell, f] : failures) {
    out << "<details><summary>" << html_escape(f->property) << " in " << dtype_name(cell->dtype) << " "
        << mode_name(cell->mode) << ": " << tally(*f);
    if (!f->replay.empty()) out << " &mdash; the last: <code>" << html_escape(f->replay) << "</code>";
    out << "</summary><pre>" << html_escape(f->failure) << "</pre></details>\n";
  }
}

void variant_section(std::ostream& out, const VariantReport& v) {
  const Capabilities& caps = v.capabilities;
  out << "<section id=\"v-" << html_escape(v.name) << "\"><h2>" << html_escape(v.name)
      << (caps.is_mutant ? " <small>(mutant)</small>" : "") << "</h2><p class=\"note\">"
      << html_escape(v.description) << ". Declares dtypes";
  for (DType d : caps.dtypes) out << " " << dtype_name(d);
  out << "; modes";
  for (Mode m : caps.modes) out << " " << mode_name(m);
  out << "; head_dim &le; " << caps.max_head_dim << (caps.needs_gpu ? "; needs a GPU" : "") << ".</p>\n";
  if (v.skipped) {
    out << "<p class=\"skip\">Skipped: " << html_escape(v.skip_reason) << "</p></section>\n";
    return;
  }
  cell_table(out, v);
  histograms(out, v);
  breakdown_tables(out, v);
  property_grid(out, v);
  out << "</section>\n";
}

void comparison_section(std::ostream& out, const Comparison& c) {
  out << "<section id=\"comparison\"><h2>Compared with an earlier report</h2><p class=\"note\">Before: <code>"
      << html_escape(c.old_file) << "</code> (" << html_escape(c.old_generated_at) << ", revision <code>"
      << html_escape(c.old_revision) << "</code>). Each figure before &rarr; now; red where it grew by more than a "
         "quarter (and by more than 0.01 of the bound, or one ulp), or where a passing cell now fails. ";
  out << (c.worse() ? "<span class=\"fail\">Precision got worse.</span>" : "<span class=\"pass\">No figure got worse.</span>");
  if (!c.settings_note.empty()) out << " Note: " << html_escape(c.settings_note) << ".";
  out << "</p>\n";
  for (const VariantComparison& v : c.variants) {
    const std::string title = v.before.empty()          ? v.after + " (only in this report)"
                              : v.after.empty()         ? v.before + " (only in the earlier report)"
                              : v.before == v.after     ? v.after
                                                        : v.before + " \u2192 " + v.after;
    out << "<h3>" << html_escape(title) << (v.worse ? " <span class=\"fail\">worse</span>" : "") << "</h3>";
    if (v.cells.empty()) continue;
    out << "<table><tr><th>dtype</th><th>mode</th><th>verdict</th>";
    for (const FigureChange& f : v.cells.front().figures) out << "<th>" << html_escape(f.figure) << "</th>";
    if (v.cells.front().figures.empty()) out << "<th class=\"l\">figures</th>";
    out << "</tr>\n";
    for (const CellComparison& cell : v.cells) {
      out << "<tr" << (cell.worse ? " class=\"worse\"" : "") << "><th>" << html_escape(cell.dtype) << "</th><th>"
          << html_escape(cell.mode) << "</th><td" << (cell.verdict_before == "pass" && cell.verdict_after == "fail" ? " class=\"worse\"" : "")
          << ">" << html_escape(cell.verdict_before) << " &rarr; " << html_escape(cell.verdict_after) << "</td>";
      for (const FigureChange& f : cell.figures) {
        const auto shown = [&f](double x) { return f.figure.rfind("ulps", 0) == 0 ? figure(x) : ratio(x); };
        out << "<td" << (f.worse ? " class=\"worse\"" : "") << ">" << shown(f.before) << " &rarr; " << shown(f.after)
            << "</td>";
      }
      if (cell.figures.empty()) out << "<td class=\"l skip\">in one report only</td>";
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  out << "</section>\n";
}

void kill_matrix_section(std::ostream& out, const Report& r) {
  out << "<section id=\"kill-matrix\"><h2>Mutant kill matrix</h2>";
  if (!r.kill_matrix) {
    out << "<p class=\"note\">No kill matrix: " << html_escape(r.kill_matrix_note) << ".</p></section>\n";
    return;
  }
  const KillMatrix& m = *r.kill_matrix;
  const KillSummary summary = summarize(m);
  out << "<p class=\"note\">Every property against every deliberately broken kernel, " << m.cases_per_property
      << " cases each, seed " << m.seed << ": " << summary.killed_mutants << " of " << m.mutants.size()
      << " mutants killed";
  if (!summary.cases_to_first_kill.empty())
    out << ", a median of " << figure(summary.median_cases_to_first_kill) << " cases to the first kill (worst "
        << summary.worst_cases_to_first_kill << ", " << html_escape(summary.slowest_mutant) << ")";
  out << ". A cell gives the case on which the property first killed the mutant (fewer is a sharper property).";
  if (!summary.survivors.empty()) {
    out << " <span class=\"fail\">Survivors:";
    for (const std::string& s : summary.survivors) out << " " << html_escape(s);
    out << "</span>.";
  }
  if (!summary.idle_properties.empty()) {
    out << " Properties that killed nothing:";
    for (const std::string& p : summary.idle_properties) out << " " << html_escape(p);
    out << ".";
  }
  out << "</p>"
      << "<p class=\"legend\"><span style=\"background:#1b5e20;color:#fff\">killed at case 1-3</span>"
         "<span style=\"background:#43a047;color:#fff\">4-30</span><span style=\"background:#a5d6a7\">&gt;30</span>"
         "<span style=\"background:#f6e7e6;color:#b0625c\">not killed by this property</span>"
         "<span style=\"background:#e53935;color:#fff\">killed by no property</span>"
         "<span style=\"background:#eceff1\">not applicable</span></p>"
      << "<table class=\"grid\"><tr><th class=\"l\">mutant</th>";
  for (const std::string& p : m.properties) out << "<th class=\"v\">" << html_escape(p) << "</th>";
  out << "<th class=\"v\">killed by</th></tr>\n";
  std::vector<const KillCell*> kills;
  for (std::size_t i = 0; i < m.mutants.size(); ++i) {
    const bool survivor =
        std::find(summary.survivors.begin(), summary.survivors.end(), m.mutants[i]) != summary.survivors.end();
    out << "<tr><th class=\"l" << (survivor ? " dead" : "") << "\">" << html_escape(m.mutants[i]) << "</th>";
    int killers = 0;
    for (std::size_t j = 0; j < m.properties.size(); ++j) {
      const KillCell& c = m.at(i, j);
      if (!c.applicable) {
        out << "<td class=\"na\" title=\"not applicable\">&middot;</td>";
      } else if (c.killed) {
        ++killers;
        kills.push_back(&c);
        const char* cls = c.cases_to_kill <= 3 ? "k1" : (c.cases_to_kill <= 30 ? "k2" : "k3");
        out << "<td class=\"" << cls << "\" title=\"" << html_escape(c.property) << " killed " << html_escape(c.mutant)
            << " at case " << c.cases_to_kill << "; shrunk size " << c.shrunk_size << "\">" << c.cases_to_kill << "</td>";
      } else {
        out << "<td class=\"s\" title=\"" << html_escape(c.mutant) << " survived " << html_escape(c.property)
            << "\">&ndash;</td>";
      }
    }
    out << "<td" << (killers == 0 ? " class=\"zero\"" : "") << ">" << killers << "</td></tr>\n";
  }
  out << "</table>\n<details><summary>Replay commands of the " << kills.size() << " kills</summary><table>"
      << "<tr><th class=\"l\">mutant</th><th class=\"l\">property</th><th>case</th><th>shrunk size</th>"
         "<th class=\"l\">replay</th></tr>\n";
  for (const KillCell* c : kills)
    out << "<tr><td class=\"l\">" << html_escape(c->mutant) << "</td><td class=\"l\">" << html_escape(c->property)
        << "</td><td>" << c->cases_to_kill << "</td><td>" << c->shrunk_size << "</td><td class=\"l\"><code>"
        << html_escape(c->case_file_replay.empty() ? c->replay : c->case_file_replay) << "</code></td></tr>\n";
  out << "</table></details></section>\n";
}

std::string coverage_cell(const CoverageCount& c) {
  const double pct = c.percent();
  return "<span class=\"covbar\"><i style=\"width:" + printf_string("%.1f", std::clamp(pct, 0.0, 100.0)) +
         "%\"></i></span>" + printf_string("%.1f%%", pct) + " <small>(" + count(c.hit) + "/" + count(c.found) +
         ")</small>";
}

void coverage_section(std::ostream& out, const Report& r) {
  out << "<section id=\"coverage\"><h2>Coverage</h2>";
  if (!r.coverage) {
    out << "<p class=\"note\">" << html_escape(r.coverage_note) << ".</p></section>\n";
    return;
  }
  out << "<p class=\"note\">From <code>" << html_escape(r.coverage->gcovr_summary.string()) << "</code>. ";
  if (!r.coverage_html.empty())
    out << "<a href=\"" << html_escape(r.coverage_html) << "\">The line-by-line coverage report</a>.";
  else
    out << "gcovr's HTML pages were not found beside the summary.";
  out << "</p><table><tr><th class=\"l\">folder</th><th>files</th><th class=\"l\">lines</th>"
         "<th class=\"l\">branches</th><th class=\"l\">functions</th></tr>\n";
  auto row = [&](const FolderCoverage& f) {
    out << "<tr><td class=\"l\">" << html_escape(f.folder) << "</td><td>" << f.files << "</td><td class=\"l\">"
        << coverage_cell(f.lines) << "</td><td class=\"l\">" << coverage_cell(f.branches) << "</td><td class=\"l\">"
        << coverage_cell(f.functions) << "</td></tr>\n";
  };
  for (const FolderCoverage& f : r.coverage->folders) row(f);
  row(r.coverage->total);
  out << "</table></section>\n";
}

}  // namespace

std::string histogram_svg(const Log2Histogram& h, const std::string& title, const std::string& unit) {
  constexpr int kLeft = 40, kTop = 30, kBar = 18, kGap = 2, kPlot = 110, kBottom = 34;
  const int bins = h.bins();
  const int width = kLeft + bins * (kBar + kGap) + 10;
  constexpr int kHeight = kTop + kPlot + kBottom;
  const std::uint64_t total = h.total();
  std::uint64_t largest = 0;
  for (int b = 0; b < bins; ++b) largest = std::max(largest, h.count(b));
  const double top = std::log10(1.0 + static_cast<double>(std::max<std::uint64_t>(largest, 9)));
  auto y_of = [&](double n) { return kTop + kPlot - kPlot * std::log10(1.0 + n) / top; };
  const auto px = [](double v) { return printf_string("%.1f", v); };

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << width << " " << kHeight << "\" role=\"img\" aria-label=\"" << html_escape(title)
      << "\" font-family=\"system-ui,sans-serif\">";
  // The share at most 1: within one ulp, or within the bound.
  std::uint64_t within_one = 0;
  for (int b = 0; b <= h.bin_of(1.0); ++b) within_one += h.count(b);
  out << "<text x=\"" << kLeft << "\" y=\"14\" font-size=\"12\" font-weight=\"600\">" << html_escape(title)
      << "</text><text x=\"" << kLeft << "\" y=\"26\" font-size=\"10\" fill=\"#4a5568\">" << count(total)
      << " elements, "
      << (total ? printf_string("%.2f", 100.0 * static_cast<double>(within_one) / static_cast<double>(total)) : "0")
      << (unit == "ulps" ? "% within 1 ulp" : "% within " + html_escape(unit) + " 1") << "</text>";
  // Grid lines at 1, 10, 100, ... elements.
  for (double n = 1; n <= static_cast<double>(largest) * 1.0001 || n == 1; n *= 10) {
    const double y = y_of(n);
    out << "<line x1=\"" << kLeft << "\" x2=\"" << width - 10 << "\" y1=\"" << px(y) << "\" y2=\"" << px(y)
        << "\" stroke=\"#e3e7ec\"/><text x=\"" << kLeft - 4 << "\" y=\"" << px(y + 3)
        << "\" font-size=\"9\" text-anchor=\"end\" fill=\"#6b7480\">"
        << (n < 1e4 ? printf_string("%.0f", n) : printf_string("1e%.0f", std::log10(n))) << "</text>";
  }
  out << "<line x1=\"" << kLeft << "\" x2=\"" << width - 10 << "\" y1=\"" << kTop + kPlot << "\" y2=\"" << kTop + kPlot
      << "\" stroke=\"#8a939d\"/>";
  for (int b = 0; b < bins; ++b) {
    const int x = kLeft + b * (kBar + kGap) + kGap / 2;
    const std::uint64_t n = h.count(b);
    if (n > 0) {
      const double y = y_of(static_cast<double>(n));
      out << "<rect class=\"" << bar_class(h.worst_normalized(b)) << "\" x=\"" << x << "\" y=\"" << px(y)
          << "\" width=\"" << kBar << "\" height=\"" << px(kTop + kPlot - y) << "\"><title>" << count(n)
          << " elements at "
          << html_escape(h.label(b)) << " " << html_escape(unit) << " ("
          << printf_string("%.3g", 100.0 * static_cast<double>(n) / static_cast<double>(total))
          << "%), worst error/bound " << ratio(h.worst_normalized(b)) << "</title></rect>";
    }
    out << "<text x=\"" << x + kBar / 2 << "\" y=\"" << kTop + kPlot + 4 << "\" font-size=\"9\" fill=\"#4a5568\" "
        << "text-anchor=\"end\" transform=\"rotate(-60 " << x + kBar / 2 << " " << kTop + kPlot + 4 << ")\">"
        << html_escape(h.short_label(b)) << "</text>";
  }
  out << "<text x=\"" << width - 10 << "\" y=\"" << kHeight - 2 << "\" font-size=\"9\" text-anchor=\"end\" "
      << "fill=\"#6b7480\">" << html_escape(unit) << " (log bins) &#8594;</text></svg>";
  return out.str();
}

std::string render_html(const Report& r) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      << "<link rel=\"icon\" href=\"data:,\">"  // no favicon request: the page loads nothing
      << "<title>pacheck report " << html_escape(r.environment.generated_at) << "</title><style>" << kStyle
      << "</style></head><body>\n";
  header(out, r);
  navigation(out, r);
  out << "<main>\n";
  summary(out, r);
  if (r.comparison) comparison_section(out, *r.comparison);
  for (const VariantReport& v : r.variants) variant_section(out, v);
  kill_matrix_section(out, r);
  coverage_section(out, r);
  out << "</main></body></html>\n";
  return out.str();
}

}  // namespace pacheck::reports
