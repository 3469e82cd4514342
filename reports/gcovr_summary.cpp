// Reads gcovr's JSON summary into per-folder coverage figures, and prints and serialises them.
#include "reports/gcovr_summary.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace pacheck::reports {
namespace {

std::string folder_of(const std::string& filename) {
  const std::filesystem::path normal = std::filesystem::path(filename).lexically_normal();
  if (normal.is_relative() && *normal.begin() != ".." && std::distance(normal.begin(), normal.end()) > 1)
    return normal.begin()->string() + "/";
  const std::filesystem::path parent = normal.parent_path().filename();
  return (parent.empty() || parent == "..") ? "./" : parent.string() + "/";
}

void add_to(FolderCoverage& into, const FolderCoverage& f) {
  into.files += f.files;
  into.lines.add(f.lines);
  into.branches.add(f.branches);
  into.functions.add(f.functions);
}

// One entry's KIND_covered and KIND_total ("line", "branch" or "function"), or CoverageFormatError naming the entry.
CoverageCount count_of(const nlohmann::json& file, const std::string& kind, const std::string& where) {
  CoverageCount c;
  for (const auto& [key, into] : {std::pair{kind + "_covered", &c.hit}, std::pair{kind + "_total", &c.found}}) {
    const auto value = file.find(key);
    if (value == file.end() || !value->is_number_unsigned())
      throw CoverageFormatError(where + ": \"" + key + "\" is missing or not a non-negative integer");
    *into = value->get<std::uint64_t>();
  }
  if (c.hit > c.found)
    throw CoverageFormatError(where + ": " + kind + "_covered " + std::to_string(c.hit) + " exceeds " + kind +
                              "_total " + std::to_string(c.found));
  return c;
}

}  // namespace

CoverageSummary parse_gcovr_summary(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw CoverageFormatError(std::string("not JSON, so not a gcovr JSON summary: ") + e.what());
  }
  if (!j.is_object() || !j.contains("gcovr/summary_format_version"))
    throw CoverageFormatError("not a gcovr JSON summary: no \"gcovr/summary_format_version\" key (gcovr "
                              "--json-summary writes one)");
  const auto files = j.find("files");
  if (files == j.end() || !files->is_array())
    throw CoverageFormatError("the gcovr JSON summary has no \"files\" array");
  if (files->empty()) throw CoverageFormatError("the gcovr JSON summary lists no files");

  std::map<std::string, FolderCoverage> folders;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < files->size(); ++i) {
    const nlohmann::json& file = (*files)[i];
    const std::string where = "files[" + std::to_string(i) + "]";
    if (!file.is_object()) throw CoverageFormatError(where + " is not an object");
    const auto name = file.find("filename");
    if (name == file.end() || !name->is_string() || name->get<std::string>().empty())
      throw CoverageFormatError(where + ": \"filename\" is missing or not a non-empty string");
    const std::string filename = name->get<std::string>();
    if (!seen.insert(filename).second) throw CoverageFormatError(where + ": " + filename + " is listed twice");
    const std::string entry = where + " (" + filename + ")";
    FolderCoverage f;
    f.files = 1;
    f.lines = count_of(file, "line", entry);
    f.branches = count_of(file, "branch", entry);
    f.functions = count_of(file, "function", entry);
    add_to(folders[folder_of(filename)], f);
  }
  CoverageSummary summary;
  summary.total.folder = "total";
  for (auto& [folder, figures] : folders) {
    figures.folder = folder;
    add_to(summary.total, figures);
    summary.folders.push_back(figures);
  }
  return summary;
}

CoverageSummary read_gcovr_summary(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CoverageFormatError("cannot open the gcovr JSON summary " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    CoverageSummary summary = parse_gcovr_summary(text.str());
    summary.gcovr_summary = file;
    return summary;
  } catch (const CoverageFormatError& e) {
    throw CoverageFormatError(file.string() + ": " + e.what());
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
  return {{"gcovr_summary", summary.gcovr_summary.string()},
          {"folders", folders},
          {"total", folder_json(summary.total)}};
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
