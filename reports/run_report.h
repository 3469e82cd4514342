// Runs the report: the catalogue over each selected variant, one dtype and mode at a time, collecting the error
// statistics; the mutant kill matrix; the coverage figures if a coverage run left them. Each cell's worst case and
// every failing case are saved in the report folder.
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
  std::filesystem::path source_root;       // the checkout: asked for its git revision
  std::filesystem::path coverage_summary;  // the coverage-report target's gcovr-summary.json; empty: none
  std::string command_line;
};

struct Progress {
  std::string stage;  // "properties" or "kill matrix"
  int done = 0;
  int total = 0;
  std::string what;     // "cpu_streaming f16 decode TileSizeInvariance"
  bool failed = false;  // the property just run failed on some case
};
using ProgressCallback = std::function<void(const Progress&)>;

// How replay lines name the program: they run from the report folder, with pacheck on PATH.
inline constexpr const char* kReportReplayProgram = "pacheck";

// A replay or reproduce line without the running machine's paths: `PROGRAM replay OUT_DIR/FILE` becomes `pacheck
// replay FILE` and `PROGRAM check` `pacheck check`.
std::string relative_to_report(std::string text, const std::filesystem::path& out_dir, const std::string& program);

// Removes an earlier report's files by its manifest (report_files.h), then runs. Variants that need a GPU are
// skipped, with the reason, when no CUDA device answers.
Report run_report(const ReportSettings& settings, const ProgressCallback& progress = {});

// Fills report.coverage from gcovr's JSON summary `summary_file` and coverage_html with gcovr's html/index.html
// beside it (relative to out_dir), or coverage_note with why there are none.
void attach_coverage(Report& report, const std::filesystem::path& summary_file);

}  // namespace pacheck::reports
