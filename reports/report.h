// What a `pacheck report` run found: per variant, dtype and mode, the error statistics and property verdicts; the
// kill matrix; the environment; the coverage figures. run_report.h fills it, report_files.h writes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "properties/agreement.h"
#include "properties/kill_matrix.h"
#include "reports/gcovr_summary.h"
#include "reports/ulp_statistics.h"
#include "variants/variant.h"

namespace pacheck::reports {

enum class Verdict { passed, failed, gave_up, error };
const char* verdict_name(Verdict verdict);  // "pass", "fail", "gave up", "error"

// One property of the catalogue run in one cell.
struct PropertyOutcome {
  std::string property;
  Verdict verdict = Verdict::passed;
  int cases = 0;
  int failed_cases = 0;  // the report runs on past a failure
  std::string failure;   // the last failing case's message, or why RapidCheck gave up or stopped
  std::string replay;    // the last failing case's replay command, when saved
};

// A cell's compared output with the largest error / bound, saved as a case file.
struct WorstCaseFile {
  std::string property;
  std::filesystem::path file;  // relative to the report folder
  std::string replay;          // `pacheck replay <file> --variant <variant>`, run from the report folder
  std::string position;        // which element
  ElementError element;
};

// One variant in one dtype and one mode: every applicable property, the generator narrowed to that dtype and mode.
struct CellReport {
  DType dtype = DType::f32;
  Mode mode = Mode::decode;
  int cases = 0;                     // over every property
  std::size_t compared_outputs = 0;  // compared with the oracle
  std::size_t elements = 0;
  UlpHistogram histogram;          // scaled ulps
  RatioHistogram ratio_histogram;  // error / bound
  double median_ulps = 0;          // scaled ulps (of each element's scale, properties/agreement.h)
  double p99_ulps = 0;
  double worst_ulps = 0;
  double raw_median_ulps = 0;  // raw ulps (of each element's own magnitude): blown up where outputs cancel
  double raw_p99_ulps = 0;
  double raw_worst_ulps = 0;
  ShapeBreakdown breakdown;
  double worst_normalized = 0;  // the largest error / bound of any element (above 1: the bound was broken)
  double tightness_median = 0;  // of each compared output's worst error / bound
  double tightness_p99 = 0;
  std::optional<WorstCaseFile> worst;
  std::vector<PropertyOutcome> properties;
  double seconds = 0;

  bool passed() const;
};

// What the catalogue observed of a guarantee a variant may declare (determinism, batch invariance).
struct GuaranteeCheck {
  enum class Status { held, failed, not_applicable, not_in_catalogue, not_run };
  std::string property;  // "Determinism", "BatchIsolation"
  Status status = Status::not_run;
  int cases = 0;
  std::vector<std::string> failed_cells;  // "f16 decode"
};
const char* status_name(GuaranteeCheck::Status status);  // "held", "failed", "not applicable", ...

struct VariantReport {
  std::string name;
  std::string description;
  Capabilities capabilities;
  bool skipped = false;
  std::string skip_reason;
  std::vector<CellReport> cells;
  GuaranteeCheck determinism;
  GuaranteeCheck batch_isolation;

  bool passed() const;  // every property passed in every cell (false when skipped)
  int cases() const;
  double worst_ulps() const;  // over every cell
  UlpHistogram histogram(DType dtype) const;  // merged over modes
  RatioHistogram ratio_histogram(DType dtype) const;
  ShapeBreakdown breakdown(DType dtype) const;
  const CellReport* worst_cell() const;  // the largest worst_normalized; nullptr without cells
};

struct Environment {
  std::string git_revision;  // "unknown: ..." when git cannot tell
  bool git_dirty = false;    // tracked files differ from the revision
  std::string compiler;      // "GCC 12.2.0"
  std::string build_type;
  bool cuda_available = false;
  std::string cuda_device;  // the device, or why there is none
  unsigned hardware_threads = 0;
  std::string generated_at;  // UTC, ISO 8601
  std::string command_line;
};

// `source_root` is the checkout git is asked about; `command_line` is recorded as given.
Environment collect_environment(const std::filesystem::path& source_root, const std::string& command_line);

// One figure of a cell in two reports: worse when it grew by more than a quarter and by more than its slack (0.01
// for error/bound, one ulp for ulps), so run-to-run noise is not flagged.
struct FigureChange {
  std::string figure;  // "error/bound median", "ulps p99", ...
  double before = 0;
  double after = 0;
  bool worse = false;
};

struct CellComparison {
  std::string dtype;
  std::string mode;
  std::string verdict_before;  // "pass", "fail", or "absent"
  std::string verdict_after;
  std::vector<FigureChange> figures;
  bool worse = false;  // a figure got worse, or the cell passed before and fails now
};

struct VariantComparison {
  std::string before;  // the variant's name in the old report ("" when only in the new one)
  std::string after;
  std::vector<CellComparison> cells;
  bool worse = false;
};

// `pacheck report --compare OLD_ulp.json`: variant by variant (paired by name, or by --compare-pair), cell by cell.
struct Comparison {
  std::string old_file;
  std::string old_generated_at;
  std::string old_revision;
  std::string settings_note;  // how the two runs' settings differ, or ""
  std::vector<VariantComparison> variants;
  bool worse() const;
};

struct Report {
  std::filesystem::path out_dir;
  int cases_per_property = 0;
  std::uint64_t seed = 0;
  int kill_cases = 0;
  Environment environment;
  std::vector<VariantReport> variants;
  std::optional<KillMatrix> kill_matrix;
  std::string kill_matrix_note;  // why there is none
  double kill_matrix_seconds = 0;
  std::optional<CoverageSummary> coverage;
  std::string coverage_html;  // gcovr's HTML index, relative to out_dir; empty when absent
  std::string coverage_note;  // why there are none
  double seconds = 0;
  std::vector<std::string> written_files;  // the case files the run wrote, relative to out_dir (for the manifest)
  std::optional<Comparison> comparison;    // with --compare

  bool non_mutants_passed() const;  // every non-mutant variant that ran passed
};

}  // namespace pacheck::reports
