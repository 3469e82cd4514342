// Line, branch and function coverage per top-level folder, read from an lcov tracefile (the `coverage-report`
// target's coverage.info). The ulp report embeds these figures; `pacheck_coverage_summary` prints them in CI.
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
  // 100 * hit / found; 100 when nothing was found (nothing to miss).
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
  std::filesystem::path tracefile;
  std::vector<FolderCoverage> folders;  // sorted by folder name
  FolderCoverage total;
};

class LcovFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses an lcov tracefile. Each file (SF: record) is attributed to its top-level folder: the first component of
// its path below `source_root`, or its parent directory's name when it lies outside `source_root`. Counts come
// from the records' LF/LH, BRF/BRH, FNF/FNH lines, or from the DA / BRDA / FNDA lines when those are absent.
// Throws LcovFormatError naming the line when the file is not a tracefile.
CoverageSummary parse_lcov_tracefile(const std::string& text, const std::filesystem::path& source_root);
CoverageSummary read_lcov_tracefile(const std::filesystem::path& tracefile, const std::filesystem::path& source_root);

nlohmann::json to_json(const CoverageSummary& summary);
// A fixed-width table: folder, files, lines, branches, functions (hit/found and percent).
std::string format_coverage_table(const CoverageSummary& summary);

}  // namespace pacheck::reports
