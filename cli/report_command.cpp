// pacheck report: runs the report (reports/run_report.h), prints its summary and writes ulp.json and index.html;
// with --compare, its figures against an earlier report's. reports/README.md explains the figures.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "reports/report_files.h"
#include "reports/run_report.h"

namespace pacheck::cli {
namespace {

struct ReportOptions {
  std::string out_dir = "pacheck-report";
  reports::ReportSettings settings;  // --cases, --seed and --kill-cases set its fields
  std::vector<std::string> variants;
  std::string coverage = std::string(PACHECK_SOURCE_DIR) + "/build/coverage/coverage-report/gcovr-summary.json";
  std::vector<std::string> plugins;
  std::string compare;                     // an earlier report's ulp.json
  std::vector<std::string> compare_pairs;  // OLD=NEW: variant NEW of this report against OLD of the earlier one
};

// One line on stderr: rewritten in place on a terminal, a new line every 5% (and for each failure) in a log.
class ProgressLine {
 public:
  ProgressLine() : terminal_(isatty(fileno(stderr)) != 0) {}
  ~ProgressLine() { finish(); }

  void update(const reports::Progress& p) {
    const int percent = p.total > 0 ? 100 * p.done / p.total : 100;
    char line[256];
    std::snprintf(line, sizeof line, "[%s %4d/%-4d %3d%%] %s%s", p.stage.c_str(), p.done, p.total, percent,
                  p.what.c_str(), p.failed ? "  (failed)" : "");
    if (terminal_) {
      std::fprintf(stderr, "\r\033[K%s", line);
      open_ = true;
    } else if (p.stage != stage_ || percent / 5 != last_step_ || p.done == p.total || p.failed) {
      std::fprintf(stderr, "%s\n", line);
    }
    stage_ = p.stage;
    last_step_ = percent / 5;
    std::fflush(stderr);
  }
  void finish() {
    if (open_) std::fprintf(stderr, "\n");
    open_ = false;
  }

 private:
  bool terminal_;
  bool open_ = false;
  std::string stage_;
  int last_step_ = -1;
};

std::string command_line(const ReportOptions& o, const std::string& program) {
  const reports::ReportSettings& s = o.settings;
  std::string line = program + " report --out " + o.out_dir + " --cases " + std::to_string(s.cases) + " --seed " +
                     std::to_string(s.seed) + " --kill-cases " + std::to_string(s.kill_cases);
  for (const std::string& v : o.variants) line += " --variant " + v;
  for (const std::string& p : o.plugins) line += " --plugin " + p;
  if (!o.compare.empty()) line += " --compare " + o.compare;
  for (const std::string& p : o.compare_pairs) line += " --compare-pair " + p;
  return line;
}

// The replay lines of a plugin variant's failures load its plugin.
void add_plugin_arguments(reports::Report& report) {
  for (reports::VariantReport& v : report.variants)
    for (reports::CellReport& cell : v.cells) {
      for (reports::PropertyOutcome& p : cell.properties) {
        p.failure = with_plugin_arguments(p.failure, v.name);
        p.replay = with_plugin_arguments(p.replay, v.name);
      }
      if (cell.worst) cell.worst->replay = with_plugin_arguments(cell.worst->replay, v.name);
    }
}

void print_summary(const reports::Report& r) {
  std::printf("\n%-24s %8s %12s %14s %12s  %s\n", "variant", "cases", "worst ulps", "worst/bound", "tightness",
              "verdict");
  for (const reports::VariantReport& v : r.variants) {
    if (v.skipped) {
      std::printf("%-24s %8s %12s %14s %12s  skipped: %s\n", v.name.c_str(), "-", "-", "-", "-", v.skip_reason.c_str());
      continue;
    }
    double tightness = 0;  // the largest median tightness of any cell
    for (const reports::CellReport& c : v.cells) tightness = std::max(tightness, c.tightness_median);
    const reports::CellReport* worst = v.worst_cell();
    std::printf("%-24s %8d %12.3g %14.4g %12.4g  %s\n", v.name.c_str(), v.cases(), v.worst_ulps(),
                worst ? worst->worst_normalized : 0.0, tightness, v.passed() ? "pass" : "FAIL");
  }
  std::printf("(ulps are scaled: in ulps of each element's scale, reports/README.md)\n");
  if (r.kill_matrix) {
    std::printf("kill matrix: %zu of %zu mutants killed (%d cases per property)\n",
                summarize(*r.kill_matrix).killed_mutants, r.kill_matrix->mutants.size(),
                r.kill_matrix->cases_per_property);
  } else {
    std::printf("kill matrix: %s\n", r.kill_matrix_note.c_str());
  }
  if (r.coverage) {
    std::printf("coverage: lines %.1f%%, branches %.1f%% (%s)\n", r.coverage->total.lines.percent(),
                r.coverage->total.branches.percent(), r.coverage->gcovr_summary.c_str());
  } else {
    std::printf("coverage: %s\n", r.coverage_note.c_str());
  }
}

// Prints the comparison: per variant, the cells whose figures got worse, each figure before and now.
void print_comparison(const reports::Comparison& c) {
  std::printf("\ncompared with %s (%s):\n", c.old_file.c_str(), c.old_generated_at.c_str());
  if (!c.settings_note.empty()) std::printf("  note: %s\n", c.settings_note.c_str());
  for (const reports::VariantComparison& v : c.variants) {
    const std::string name = v.before.empty() ? v.after + " (only now)"
                             : v.after.empty() ? v.before + " (only before)"
                             : v.before == v.after ? v.after : v.before + " -> " + v.after;
    std::printf("  %-40s %s\n", name.c_str(), v.worse ? "PRECISION WORSE" : "no worse");
    for (const reports::CellComparison& cell : v.cells) {
      if (!cell.worse) continue;
      std::printf("    %s %s: %s -> %s", cell.dtype.c_str(), cell.mode.c_str(), cell.verdict_before.c_str(),
                  cell.verdict_after.c_str());
      for (const reports::FigureChange& f : cell.figures)
        if (f.worse) std::printf("; %s %.4g -> %.4g", f.figure.c_str(), f.before, f.after);
      std::printf("\n");
    }
  }
}

// --compare-pair OLD=NEW, as a map from NEW to OLD; throws CLI::ValidationError for a malformed pair.
std::map<std::string, std::string> compare_pairs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const std::string& p : pairs) {
    const std::size_t at = p.find('=');
    if (at == 0 || at == std::string::npos || at + 1 == p.size())
      throw CLI::ValidationError("--compare-pair", "'" + p + "' is not OLD=NEW (two variant names)");
    out[p.substr(at + 1)] = p.substr(0, at);
  }
  return out;
}

void run_report_command(const ReportOptions& o, const std::string& program) {
  load_plugins(o.plugins);
  const std::map<std::string, std::string> pairs = compare_pairs(o.compare_pairs);
  if (!o.compare_pairs.empty() && o.compare.empty())
    throw CLI::ValidationError("--compare-pair", "needs --compare OLD_ulp.json");
  nlohmann::json old_report;
  if (!o.compare.empty()) {
    try {  // read first: a comparison that cannot be made should not cost a whole run
      old_report = reports::read_ulp_json(o.compare);
    } catch (const std::exception& e) {
      throw CLI::ValidationError("--compare", e.what());
    }
  }
  reports::ReportSettings settings = o.settings;
  settings.out_dir = o.out_dir;
  // Named variants may be mutants (a report on a deliberately broken kernel shows what its errors look like).
  settings.variants = select_variants(o.variants, !o.variants.empty());
  settings.replay_program = program;
  settings.source_root = PACHECK_SOURCE_DIR;
  settings.coverage_summary = o.coverage;
  settings.command_line = command_line(o, program);

  reports::Report report;
  try {
    ProgressLine progress;
    report = reports::run_report(settings, [&](const reports::Progress& p) { progress.update(p); });
  } catch (const std::exception& e) {  // the report folder cannot be created or written, say
    return fail(printable(e.what()));
  }
  add_plugin_arguments(report);
  if (!o.compare.empty())
    report.comparison = reports::compare_reports(old_report, reports::to_json(report), pairs, o.compare);
  print_summary(report);
  if (report.comparison) print_comparison(*report.comparison);
  try {
    const reports::ReportFiles files = reports::write_report_files(report);
    std::cout << "\nreport written in " << report.seconds << " s:\n  "
              << std::filesystem::absolute(files.html).lexically_normal().string() << "\n  "
              << std::filesystem::absolute(files.json).lexically_normal().string() << "\n";
  } catch (const std::exception& e) {
    return fail(printable(e.what()));
  }
  set_exit_code(report.non_mutants_passed() && !(report.comparison && report.comparison->worse()) ? 0 : 1);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Run the catalogue over every available variant per dtype and mode, and write ulp.json and index.html");
  cmd->add_option("--out", options->out_dir,
                  "The report folder (created; an earlier report's files there, as its manifest lists them, are replaced)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--cases", options->settings.cases, "Cases per property, per variant, dtype and mode")
      ->check(whole_number(1, 100000000));
  cmd->add_option("--seed", options->settings.seed, "RapidCheck seed")->check(whole_number(0, UINT64_MAX));
  cmd->add_option("--variant", options->variants,
                  "Variant(s) to report on, mutants included (default: every non-mutant variant)");
  cmd->add_option("--kill-cases", options->settings.kill_cases,
                  "Cases per property and mutant in the kill matrix; 0 leaves it out")
      ->check(whole_number(0, 100000000));
  cmd->add_option("--coverage", options->coverage,
                  "gcovr's JSON summary whose figures the report embeds, if it exists");
  cmd->add_option("--compare", options->compare,
                  "An earlier report's ulp.json: the new figures against it, per variant and cell; exit 1 when "
                  "precision got worse");
  cmd->add_option("--compare-pair", options->compare_pairs,
                  "OLD=NEW: compare this report's variant NEW with the earlier report's OLD (default: by name)");
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options, cmd] { run_report_command(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
