// Writes a report's files into its folder: ulp.json (ulp_json.h), index.html (html_page.h) and the manifest of every
// file the report wrote, so that the next report into that folder removes exactly those and nothing a user put there.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "reports/report.h"

namespace pacheck::reports {

// The manifest's name in a report folder: a JSON list of the report's files, relative to the folder.
inline constexpr const char* kManifestName = ".pacheck-report-manifest.json";

struct ReportFiles {
  std::filesystem::path json;
  std::filesystem::path html;
  std::filesystem::path manifest;
};

// Removes the files the manifest in out_dir lists (entries that would leave out_dir are ignored), then the folders
// under cases/, failures/ and mutants/ that this leaves empty. A folder without a manifest loses nothing.
void remove_previous_report(const std::filesystem::path& out_dir);

// The files now under out_dir's cases/, failures/ and mutants/, relative to out_dir: before and after a run, the
// difference is what the run wrote.
std::set<std::string> case_files_in(const std::filesystem::path& out_dir);

// Writes ulp.json, index.html and the manifest (those two, the manifest, and report.written_files). Throws
// std::runtime_error naming the file it could not write.
ReportFiles write_report_files(const Report& report);

}  // namespace pacheck::reports
