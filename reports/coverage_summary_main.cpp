// pacheck_coverage_summary GCOVR_SUMMARY [--json FILE] [--min-lines FOLDER=PERCENT ...]
// Prints the per-folder coverage of gcovr's JSON summary, optionally as JSON too; exits 1 when a folder's line
// coverage is below its --min-lines floor, 2 when its input or options are wrong.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "reports/gcovr_summary.h"

namespace {

struct Floor {
  std::string folder;
  double percent = 0;
};

Floor parse_floor(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw CLI::ValidationError("--min-lines", "expected FOLDER=PERCENT, got '" + text + "'");
  Floor f;
  f.folder = text.substr(0, eq);
  if (f.folder.back() != '/') f.folder += '/';
  try {
    std::size_t used = 0;
    f.percent = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    throw CLI::ValidationError("--min-lines", "not a percentage in '" + text + "'");
  }
  if (!(f.percent >= 0 && f.percent <= 100))
    throw CLI::ValidationError("--min-lines", "the floor in '" + text + "' is not between 0 and 100");
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per-folder line, branch and function coverage of gcovr's JSON summary"};
  std::string summary_file, json_path;
  std::vector<std::string> floors;
  app.add_option("gcovr_summary", summary_file, "gcovr's JSON summary (gcovr --json-summary FILE)")->required();
  app.add_option("--json", json_path, "Also write the figures as JSON to this file");
  app.add_option("--min-lines", floors, "FOLDER=PERCENT: fail when the folder's line coverage is lower");
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<Floor> parsed;
    for (const std::string& f : floors) parsed.push_back(parse_floor(f));
    const pacheck::reports::CoverageSummary summary = pacheck::reports::read_gcovr_summary(summary_file);
    std::cout << pacheck::reports::format_coverage_table(summary);
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << pacheck::reports::to_json(summary).dump(2) << "\n";
      if (!out) {
        std::cerr << "error: cannot write " << json_path << "\n";
        return 2;
      }
    }
    int status = 0;
    for (const Floor& f : parsed) {
      const auto found = std::find_if(summary.folders.begin(), summary.folders.end(),
                                      [&](const auto& folder) { return folder.folder == f.folder; });
      if (found == summary.folders.end()) {
        std::cerr << "coverage: " << f.folder << " has no files in " << summary_file << "\n";
        status = 1;
      } else if (found->lines.percent() < f.percent) {
        std::cerr << "coverage: " << f.folder << " line coverage " << found->lines.percent() << "% is below "
                  << f.percent << "%\n";
        status = 1;
      }
    }
    return status;
  } catch (const std::runtime_error& e) {  // a bad floor (CLI::ValidationError) or input (CoverageFormatError)
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
