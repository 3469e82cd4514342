// Runs the report: every property of the catalogue over every selected variant, one dtype and one mode at a time,
// collecting the error statistics; then the mutant kill matrix; then reads the coverage figures if a coverage run
// left them. The worst case of each cell and every failing case are saved under the report folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "reports/report.h"

namespace pacheck::reports {

struct ReportSettings {
  std::filesystem::path out_dir = "pacheck-report";
  int cases = 30;       // per property, per (variant, dtype, mode) cell
  std::uint64_t seed = 1;
  int kill_cases = 30;  // per (mutant, property) cell of the kill matrix; 0 leaves the kill matrix out
  std::vector<const Variant*> variants;
  std::string replay_program = "pacheck";
  std::filesystem::path source_root;         // the checkout: asked for its git revision
  std::filesystem::path coverage_summary;  // the coverage-report target's gcovr-summary.json; empty: none
  std::string command_line;
};

struct Progress {
  std::string stage;  // "properties" or "kill matrix"
  int done = 0;
  int total = 0;
  std::string what;   // "cpu_streaming f16 decode TileSizeInvariance"
  bool failed = false;  // the property just run failed on some case
};
using ProgressCallback = std::function<void(const Progress&)>;

// How the report's replay lines name the program: they are run from the report folder, with pacheck on PATH.
inline constexpr const char* kReportReplayProgram = "pacheck";

// A replay or reproduce line as the report shows it: `PROGRAM replay OUT_DIR/FILE` becomes `pacheck replay FILE`
// (relative to the report folder) and `PROGRAM check` becomes `pacheck check`, so no build path or absolute path
// of the machine that ran the report appears on the page.
std::string relative_to_report(std::string text, const std::filesystem::path& out_dir, const std::string& program);

// Removes the files an earlier report listed in the folder's manifest (report_files.h), then runs.
// Variants that need a GPU are listed as skipped, with the reason, when no CUDA device answers.
Report run_report(const ReportSettings& settings, const ProgressCallback& progress = {});

// The coverage figures of gcovr's JSON summary `summary_file` and gcovr's HTML index (html/index.html beside it)
// relative to `out_dir`, or a note saying why there are none. Fills report.coverage, coverage_html and coverage_note.
void attach_coverage(Report& report, const std::filesystem::path& summary_file);

}  // namespace pacheck::reports
