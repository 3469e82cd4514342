#include "reports/lcov_summary.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace pacheck::reports {
namespace {

std::uint64_t parse_count(const std::string& text, int line_number, const std::string& line) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw LcovFormatError("line " + std::to_string(line_number) + ": expected a count, got '" + line + "'");
  return std::stoull(text);
}

// The comma-separated fields after "KEY:"; `at_least` of them or LcovFormatError.
std::vector<std::string> fields(const std::string& value, std::size_t at_least, int line_number, const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(value);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  if (out.size() < at_least)
    throw LcovFormatError("line " + std::to_string(line_number) + ": expected " + std::to_string(at_least) +
                          " comma-separated fields, got '" + line + "'");
  return out;
}

// Everything the tracefile says about one source file. A tracefile that was not merged (straight from a capture)
// holds one record per translation unit that included the file, so records of the same file are merged: a line,
// branch or function counts once, as hit when any record hit it.
struct FileCoverage {
  std::map<std::uint64_t, bool> lines;
  std::map<std::string, bool> branches;   // "line,block,branch"
  std::map<std::string, bool> functions;  // by name
  // LF/LH, BRF/BRH, FNF/FNH summed over the records: used only for a count no data line gave.
  CoverageCount stated_lines, stated_branches, stated_functions;

  static CoverageCount counted(const auto& hits) {
    CoverageCount c;
    for (const auto& [key, hit] : hits) {
      ++c.found;
      if (hit) ++c.hit;
    }
    return c;
  }
  FolderCoverage figures() const {
    FolderCoverage f;
    f.files = 1;
    f.lines = lines.empty() ? stated_lines : counted(lines);
    f.branches = branches.empty() ? stated_branches : counted(branches);
    f.functions = functions.empty() ? stated_functions : counted(functions);
    return f;
  }
};

std::string folder_of(const std::filesystem::path& file, const std::filesystem::path& source_root) {
  const std::filesystem::path normal = file.lexically_normal();
  if (!source_root.empty()) {
    const std::filesystem::path relative = normal.lexically_relative(source_root.lexically_normal());
    if (!relative.empty() && *relative.begin() != ".." && std::distance(relative.begin(), relative.end()) > 1)
      return relative.begin()->string() + "/";
  }
  return normal.parent_path().filename().string() + "/";
}

void add_to(FolderCoverage& into, const FolderCoverage& f) {
  into.files += f.files;
  into.lines.add(f.lines);
  into.branches.add(f.branches);
  into.functions.add(f.functions);
}

}  // namespace

CoverageSummary parse_lcov_tracefile(const std::string& text, const std::filesystem::path& source_root) {
  std::map<std::string, FileCoverage> files;
  FileCoverage* record = nullptr;  // the file of the open SF: record
  std::string record_path;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  const auto where = [&] { return "line " + std::to_string(line_number) + ": "; };
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line == "end_of_record") {
      if (!record) throw LcovFormatError(where() + "end_of_record without SF:");
      record = nullptr;
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) throw LcovFormatError(where() + "not an lcov record line: '" + line + "'");
    const std::string key = line.substr(0, colon);
    const std::string value = line.substr(colon + 1);
    if (key == "TN") continue;
    if (key == "SF") {
      if (record) throw LcovFormatError(where() + "SF: inside the record of " + record_path);
      record_path = value;
      record = &files[value];
      continue;
    }
    if (!record) throw LcovFormatError(where() + "'" + key + ":' outside an SF: record");
    if (key == "DA") {
      const auto f = fields(value, 2, line_number, line);
      bool& hit = record->lines[parse_count(f[0], line_number, line)];
      hit = hit || parse_count(f[1], line_number, line) > 0;
    } else if (key == "BRDA") {
      const auto f = fields(value, 4, line_number, line);
      bool& hit = record->branches[f[0] + "," + f[1] + "," + f[2]];
      hit = hit || (f[3] != "-" && parse_count(f[3], line_number, line) > 0);
    } else if (key == "FN") {
      const auto f = fields(value, 2, line_number, line);
      record->functions.try_emplace(f.back(), false);
    } else if (key == "FNDA") {
      const auto f = fields(value, 2, line_number, line);
      bool& hit = record->functions[f[1]];
      hit = hit || parse_count(f[0], line_number, line) > 0;
    } else if (key == "LF") {
      record->stated_lines.found += parse_count(value, line_number, line);
    } else if (key == "LH") {
      record->stated_lines.hit += parse_count(value, line_number, line);
    } else if (key == "BRF") {
      record->stated_branches.found += parse_count(value, line_number, line);
    } else if (key == "BRH") {
      record->stated_branches.hit += parse_count(value, line_number, line);
    } else if (key == "FNF") {
      record->stated_functions.found += parse_count(value, line_number, line);
    } else if (key == "FNH") {
      record->stated_functions.hit += parse_count(value, line_number, line);
    }
    // Other keys (newer lcov versions add some) carry nothing the summary needs.
  }
  if (record) throw LcovFormatError("the record of " + record_path + " has no end_of_record (truncated tracefile?)");
  if (files.empty()) throw LcovFormatError("no SF: records: not an lcov tracefile, or one with no files");

  std::map<std::string, FolderCoverage> folders;
  for (const auto& [path, file] : files) add_to(folders[folder_of(path, source_root)], file.figures());
  CoverageSummary summary;
  summary.total.folder = "total";
  for (auto& [name, figures] : folders) {
    figures.folder = name;
    add_to(summary.total, figures);
    summary.folders.push_back(figures);
  }
  return summary;
}

CoverageSummary read_lcov_tracefile(const std::filesystem::path& tracefile, const std::filesystem::path& source_root) {
  std::ifstream in(tracefile, std::ios::binary);
  if (!in) throw LcovFormatError("cannot open the lcov tracefile " + tracefile.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    CoverageSummary summary = parse_lcov_tracefile(text.str(), source_root);
    summary.tracefile = tracefile;
    return summary;
  } catch (const LcovFormatError& e) {
    throw LcovFormatError(tracefile.string() + ": " + e.what());
  }
}

namespace {
nlohmann::json count_json(const CoverageCount& c) {
  return {{"found", c.found}, {"hit", c.hit}, {"percent", c.percent()}};
}
nlohmann::json folder_json(const FolderCoverage& f) {
  return {{"files", f.files},
          {"lines", count_json(f.lines)},
          {"branches", count_json(f.branches)},
          {"functions", count_json(f.functions)}};
}
std::string count_text(const CoverageCount& c) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%6.2f%% %6llu/%-6llu", c.percent(), static_cast<unsigned long long>(c.hit),
                static_cast<unsigned long long>(c.found));
  return buffer;
}
}  // namespace

nlohmann::json to_json(const CoverageSummary& summary) {
  nlohmann::json folders = nlohmann::json::object();
  for (const FolderCoverage& f : summary.folders) folders[f.folder] = folder_json(f);
  return {{"tracefile", summary.tracefile.string()}, {"folders", folders}, {"total", folder_json(summary.total)}};
}

std::string format_coverage_table(const CoverageSummary& summary) {
  std::ostringstream out;
  char header[160];
  std::snprintf(header, sizeof header, "%-12s %5s  %-21s  %-21s  %-21s\n", "folder", "files", "lines", "branches",
                "functions");
  out << header;
  auto row = [&](const FolderCoverage& f) {
    char buffer[200];
    std::snprintf(buffer, sizeof buffer, "%-12s %5d  %s  %s  %s\n", f.folder.c_str(), f.files,
                  count_text(f.lines).c_str(), count_text(f.branches).c_str(), count_text(f.functions).c_str());
    out << buffer;
  };
  for (const FolderCoverage& f : summary.folders) row(f);
  row(summary.total);
  return out.str();
}

}  // namespace pacheck::reports
