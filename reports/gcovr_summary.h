// Line, branch and function coverage per top-level folder, from gcovr's JSON summary (the coverage-report target's
// gcovr-summary.json); the report embeds them, pacheck_coverage_summary prints them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pacheck::reports {

struct CoverageCount {
  std::uint64_t found = 0;
  std::uint64_t hit = 0;
  // 100 when nothing was found (nothing to miss).
  double percent() const { return found == 0 ? 100.0 : 100.0 * static_cast<double>(hit) / static_cast<double>(found); }
  void add(const CoverageCount& other) {
    found += other.found;
    hit += other.hit;
  }
};

struct FolderCoverage {
  std::string folder;  // "oracle/", or "total"
  int files = 0;
  CoverageCount lines;
  CoverageCount branches;
  CoverageCount functions;
};

struct CoverageSummary {
  std::filesystem::path gcovr_summary;  // the file read
  std::vector<FolderCoverage> folders;  // sorted by folder name
  FolderCoverage total;
};

class CoverageFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each of the summary's "files" counts in its filename's first component (relative to gcovr's --root), or in its
// parent directory's name when absolute (outside the root). Throws CoverageFormatError naming what is wrong when the
// text is not a gcovr JSON summary.
CoverageSummary parse_gcovr_summary(const std::string& text);
CoverageSummary read_gcovr_summary(const std::filesystem::path& file);

nlohmann::json to_json(const CoverageSummary& summary);
// A fixed-width table: folder, files, lines, branches, functions (hit/found and percent).
std::string format_coverage_table(const CoverageSummary& summary);

}  // namespace pacheck::reports
