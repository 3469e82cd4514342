// Runs the report (run_report.h): the catalogue per variant, dtype and mode, the kill matrix, the coverage figures.
#include "reports/run_report.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include <rapidcheck.h>

#include "cuda/device_probe.h"
#include "problem/case_file.h"
#include "properties/runner.h"
#include "reports/report_files.h"

namespace pacheck::reports {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "f16 decode"; with "-", the cell's part of a file name.
std::string cell_name(DType dtype, Mode mode, const char* between = " ") {
  return std::string(dtype_name(dtype)) + between + mode_name(mode);
}

template <class T>
bool supports(const std::vector<T>& supported, T value) {
  return std::find(supported.begin(), supported.end(), value) != supported.end();
}

std::vector<const Property*> applicable_properties(const Capabilities& caps) {
  std::vector<const Property*> out;
  for (const Property& p : catalogue())
    if (p.applies(caps)) out.push_back(&p);
  return out;
}

std::vector<std::pair<DType, Mode>> cells_of(const Capabilities& caps) {
  std::vector<std::pair<DType, Mode>> out;
  for (DType d : kAllDTypes)
    for (Mode m : {Mode::decode, Mode::prefill, Mode::continuation})
      if (supports(caps.dtypes, d) && supports(caps.modes, m)) out.emplace_back(d, m);
  return out;
}

// The "replay: ..." line a failing property writes into its message.
std::string replay_line_of(const std::string& failure) {
  std::istringstream in(failure);
  std::string line;
  std::string found;
  while (std::getline(in, line)) {
    const std::size_t at = line.find("replay: ");
    if (at != std::string::npos) found = line.substr(at + 8);
  }
  return found;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The failing cases of one property run. RapidCheck stops at the first failure; a report wants the statistics of
// every case, so the property runs wrapped: a failing case is counted here and RapidCheck goes on to the next.
struct FailureCount {
  int failed_cases = 0;
  std::string last_failure;  // the last failing case's message: its case file is the one left on disk
};

Property counting_failures(const Property& property, FailureCount& count) {
  Property counted = property;
  counted.body = [&property, &count](const PropertyContext& ctx) {
    try {
      property.body(ctx);
      return;
    } catch (const rc::detail::CaseResult& result) {
      if (result.type != rc::detail::CaseResult::Type::Failure) throw;  // a discarded case stays discarded
      count.last_failure = result.description;
    } catch (const rc::GenerationFailure&) {
      throw;
    } catch (const std::exception& e) {
      count.last_failure = std::string("the case threw: ") + e.what();
    } catch (...) {
      count.last_failure = "the case threw a non-standard exception";
    }
    ++count.failed_cases;
  };
  return counted;
}

PropertyOutcome outcome_of(const PropertyRun& run, const FailureCount& failures) {
  PropertyOutcome o;
  o.property = run.property;
  o.cases = run.cases;
  o.failed_cases = failures.failed_cases;
  if (run.gave_up) {
    o.verdict = Verdict::gave_up;
    o.failure = run.failure;
  } else if (!run.passed) {
    o.verdict = Verdict::error;  // RapidCheck itself failed: the wrapper lets no property failure through
    o.failure = run.failure;
  } else if (failures.failed_cases > 0) {
    o.verdict = Verdict::failed;
    o.failure = failures.last_failure;
  } else {
    o.verdict = Verdict::passed;
  }
  o.replay = replay_line_of(o.failure);
  return o;
}

void fill_statistics(CellReport& cell, const CellStatistics& stats) {
  cell.compared_outputs = stats.compared_outputs();
  cell.elements = stats.elements();
  cell.histogram = stats.histogram();
  cell.ratio_histogram = stats.ratio_histogram();
  cell.median_ulps = stats.scaled_ulps().quantile(0.5);
  cell.p99_ulps = stats.scaled_ulps().quantile(0.99);
  cell.worst_ulps = stats.scaled_ulps().max();
  cell.raw_median_ulps = stats.raw_ulps().quantile(0.5);
  cell.raw_p99_ulps = stats.raw_ulps().quantile(0.99);
  cell.raw_worst_ulps = stats.raw_ulps().max();
  cell.breakdown = stats.breakdown();
  cell.worst_normalized = stats.tightness().max();
  cell.tightness_median = stats.tightness().quantile(0.5);
  cell.tightness_p99 = stats.tightness().quantile(0.99);
}

// Saves the cell's worst compared output as a case file and records how to replay it.
WorstCaseFile save_worst_case(const ReportSettings& settings, const Variant& variant, const CellReport& cell,
                              const WorstCase& worst) {
  WorstCaseFile saved;
  saved.property = worst.property;
  saved.position = worst.position;
  saved.element = worst.element;
  saved.file = "cases/" + variant.name() + "/" + cell_name(cell.dtype, cell.mode, "-") + "-worst.json";
  std::ostringstream note;
  note.precision(6);
  note << "the largest error/bound of " << variant.name() << " in its " << cell_name(cell.dtype, cell.mode)
       << " report cell (" << worst.property << "): " << worst.position << ", error " << worst.element.error
       << ", bound " << worst.element.bound << " (" << worst.element.normalized() << " of bound), "
       << worst.element.scaled_ulps << " scaled ulps (" << worst.element.ulps << " raw)";
  write_case_file(settings.out_dir / saved.file, Case{worst.problem, worst.knobs, note.str()});
  saved.replay = std::string(kReportReplayProgram) + " replay " + saved.file.generic_string() + " --variant " +
                 variant.name();
  return saved;
}

void record_guarantee(GuaranteeCheck& check, const CellReport& cell) {
  for (const PropertyOutcome& o : cell.properties) {
    if (o.property != check.property) continue;
    check.cases += o.cases;
    if (o.verdict == Verdict::passed) {
      if (check.status != GuaranteeCheck::Status::failed) check.status = GuaranteeCheck::Status::held;
    } else {
      check.status = GuaranteeCheck::Status::failed;
      check.failed_cells.push_back(cell_name(cell.dtype, cell.mode));
    }
  }
}

GuaranteeCheck initial_guarantee(const std::string& property, const Capabilities& caps) {
  GuaranteeCheck check;
  check.property = property;
  const auto found = std::find_if(catalogue().begin(), catalogue().end(),
                                  [&](const Property& p) { return p.name == property; });
  if (found == catalogue().end())
    check.status = GuaranteeCheck::Status::not_in_catalogue;
  else if (!found->applies(caps))
    check.status = GuaranteeCheck::Status::not_applicable;
  return check;
}

class ProgressCounter {
 public:
  ProgressCounter(const ProgressCallback& callback, std::string stage, int total)
      : callback_(callback), stage_(std::move(stage)), total_(total) {}
  void step(const std::string& what, bool failed) {
    ++done_;
    if (callback_) callback_(Progress{stage_, done_, total_, what, failed});
  }

 private:
  const ProgressCallback& callback_;
  std::string stage_;
  int total_;
  int done_ = 0;
};

CellReport run_cell(const ReportSettings& settings, const Variant& variant, DType dtype, Mode mode,
                    ProgressCounter& progress) {
  const Clock::time_point start = Clock::now();
  CellReport cell;
  cell.dtype = dtype;
  cell.mode = mode;
  CellStatistics stats;
  for (const Property* property : applicable_properties(variant.capabilities())) {
    RunOptions options;
    options.cases = settings.cases;
    options.seed = settings.seed;
    // Failures are counted, not shrunk (counting_failures): the last failing case is saved whole and replays.
    options.shrink = false;
    options.failure_dir = settings.out_dir / "failures" / variant.name() / cell_name(dtype, mode, "-");
    options.replay_program = settings.replay_program;
    options.only_dtypes = {dtype};
    options.only_modes = {mode};
    FailureCount failures;
    const PropertyRun run = run_property(counting_failures(*property, failures), variant, options,
                                         [&](const CaseObservation& o) { stats.observe(o); });
    PropertyOutcome& outcome = cell.properties.emplace_back(outcome_of(run, failures));
    for (std::string* text : {&outcome.failure, &outcome.replay})
      *text = relative_to_report(*text, settings.out_dir, settings.replay_program);
    cell.cases += outcome.cases;
    progress.step(variant.name() + " " + cell_name(dtype, mode) + " " + property->name,
                  outcome.verdict != Verdict::passed);
  }
  fill_statistics(cell, stats);
  if (stats.worst()) cell.worst = save_worst_case(settings, variant, cell, *stats.worst());
  cell.seconds = seconds_since(start);
  return cell;
}

void run_kill_matrix_into(Report& report, const ReportSettings& settings, const ProgressCallback& callback) {
  if (settings.kill_cases <= 0) {
    report.kill_matrix_note = "left out (--kill-cases 0)";
    return;
  }
  const std::size_t mutants = matrix_mutants(false).size();
  if (mutants == 0) {
    report.kill_matrix_note = "no mutants are registered";
    return;
  }
  const Clock::time_point start = Clock::now();
  ProgressCounter progress(callback, "kill matrix", static_cast<int>(mutants * catalogue().size()));
  KillOptions options;
  options.cases = settings.kill_cases;
  options.seed = settings.seed;
  options.failure_dir = settings.out_dir / "mutants";
  options.replay_program = settings.replay_program;
  // A mutant surviving one property is the common case, not a failure: the grid shows which survived what.
  options.progress = [&](const KillCell& cell) { progress.step(cell.mutant + " " + cell.property, false); };
  try {
    report.kill_matrix = run_kill_matrix(options);
    for (KillCell& cell : report.kill_matrix->cells)
      for (std::string* text : {&cell.replay, &cell.case_file_replay, &cell.failure})
        *text = relative_to_report(*text, settings.out_dir, settings.replay_program);
  } catch (const std::exception& e) {
    report.kill_matrix_note = std::string("the kill matrix could not run: ") + e.what();
  }
  report.kill_matrix_seconds = seconds_since(start);
}

}  // namespace

std::string relative_to_report(std::string text, const std::filesystem::path& out_dir, const std::string& program) {
  // out_dir / "x" then its parent: the folder without a trailing separator, however it was spelled.
  const std::string folder = (out_dir / "x").parent_path().string();
  const std::string shown = std::string(kReportReplayProgram) + " ";
  replace_all(text, program + " replay " + folder + "/", shown + "replay ");
  replace_all(text, program + " check ", shown + "check ");
  return text;
}

void attach_coverage(Report& report, const std::filesystem::path& summary_file) {
  const std::string how = "build the coverage-report target (cmake --preset coverage && cmake --build --preset "
                          "coverage --target coverage-report), then run the report again";
  if (summary_file.empty()) {
    report.coverage_note = "no coverage summary was given; " + how;
    return;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(summary_file, ec)) {
    report.coverage_note = "no coverage run found (" + summary_file.string() + " does not exist); " + how;
    return;
  }
  try {
    report.coverage = read_gcovr_summary(summary_file);
  } catch (const CoverageFormatError& e) {
    report.coverage_note = std::string("the coverage summary could not be read: ") + e.what();
    return;
  }
  const std::filesystem::path html = summary_file.parent_path() / "html" / "index.html";
  if (std::filesystem::is_regular_file(html, ec))
    report.coverage_html = std::filesystem::weakly_canonical(html)
                               .lexically_relative(std::filesystem::weakly_canonical(report.out_dir))
                               .generic_string();
}

Report run_report(const ReportSettings& settings, const ProgressCallback& callback) {
  const Clock::time_point start = Clock::now();
  Report report;
  report.out_dir = settings.out_dir;
  report.cases_per_property = settings.cases;
  report.seed = settings.seed;
  report.kill_cases = settings.kill_cases;
  report.environment = collect_environment(settings.source_root, settings.command_line);

  std::filesystem::create_directories(settings.out_dir);
  remove_previous_report(settings.out_dir);  // by its manifest: a user's own files in the folder stay
  const std::set<std::string> present_before = case_files_in(settings.out_dir);

  std::string gpu_reason;
  const bool gpu = cuda_device_available(&gpu_reason);
  int total = 0;
  for (const Variant* v : settings.variants)
    if (!v->capabilities().needs_gpu || gpu)
      total += static_cast<int>(cells_of(v->capabilities()).size() * applicable_properties(v->capabilities()).size());
  ProgressCounter progress(callback, "properties", total);

  for (const Variant* v : settings.variants) {
    VariantReport vr;
    vr.name = v->name();
    vr.description = v->description();
    vr.capabilities = v->capabilities();
    vr.determinism = initial_guarantee("Determinism", vr.capabilities);
    vr.batch_isolation = initial_guarantee("BatchIsolation", vr.capabilities);
    if (vr.capabilities.needs_gpu && !gpu) {
      vr.skipped = true;
      vr.skip_reason = gpu_reason;
    } else {
      for (const auto& [dtype, mode] : cells_of(vr.capabilities)) {
        vr.cells.push_back(run_cell(settings, *v, dtype, mode, progress));
        record_guarantee(vr.determinism, vr.cells.back());
        record_guarantee(vr.batch_isolation, vr.cells.back());
      }
    }
    report.variants.push_back(std::move(vr));
  }

  run_kill_matrix_into(report, settings, callback);
  attach_coverage(report, settings.coverage_summary);
  for (const std::string& file : case_files_in(settings.out_dir))
    if (present_before.count(file) == 0) report.written_files.push_back(file);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace pacheck::reports
