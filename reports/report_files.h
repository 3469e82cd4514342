// A report's files: ulp.json (ulp_json.cpp), index.html (html_page.cpp) and the manifest of every file it wrote,
// so the next report into the folder removes exactly those and nothing a user put there.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace pacheck::reports {

// ulp.json, schema in reports/README.md; bump the version when a field changes meaning or disappears.
inline constexpr int kUlpJsonSchemaVersion = 3;

nlohmann::json to_json(const Report& report);

// Reads an earlier report's ulp.json; throws std::runtime_error naming the file when it cannot be read, is not a
// report, or has another schema version.
nlohmann::json read_ulp_json(const std::filesystem::path& file);

// `after` against `before`, both as to_json wrote them. Variants pair by name, or by `pairs`: a variant of `after`
// -> its counterpart's name in `before` (a renamed kernel, or a mutant against its correct kernel).
Comparison compare_reports(const nlohmann::json& before, const nlohmann::json& after,
                           const std::map<std::string, std::string>& pairs, const std::string& old_file);

// A number, or the string "inf", "-inf" or "nan" (JSON has no number for them).
nlohmann::json json_number(double value);

// index.html, self-contained (inline CSS and SVG, no script, no network): the summary, the comparison, per variant
// its cells, histograms, shape breakdown and property verdicts, the kill matrix, the coverage figures.
std::string render_html(const Report& report);

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

// One histogram as an inline <svg>: bins of `unit` ("ulps", "error/bound") on x, elements (log scale) on y, each bar
// coloured by its elements' worst error / bound.
std::string histogram_svg(const Log2Histogram& histogram, const std::string& title, const std::string& unit);

// The manifest: a JSON list of the report's files, relative to its folder.
inline constexpr const char* kManifestName = ".pacheck-report-manifest.json";

struct ReportFiles {
  std::filesystem::path json;
  std::filesystem::path html;
  std::filesystem::path manifest;
};

// Removes the files out_dir's manifest lists (ignoring entries that would leave out_dir), then the folders under
// cases/, failures/ and mutants/ this leaves empty. A folder without a manifest loses nothing.
void remove_previous_report(const std::filesystem::path& out_dir);

// The files under out_dir's cases/, failures/ and mutants/, relative to out_dir.
std::set<std::string> case_files_in(const std::filesystem::path& out_dir);

// Writes ulp.json, index.html and the manifest (listing those, itself and report.written_files). Throws
// std::runtime_error naming the file it could not write.
ReportFiles write_report_files(const Report& report);

}  // namespace pacheck::reports
