// Writes a report's files and manifest, and removes a previous report's by its manifest (report_files.h).
#include "reports/report_files.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace pacheck::reports {
namespace {

constexpr const char* kCaseFolders[] = {"cases", "failures", "mutants"};

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A manifest entry is a plain relative path inside the folder: no root, no "..".
bool inside_folder(const std::filesystem::path& relative) {
  if (relative.empty() || relative.is_absolute() || relative.has_root_name()) return false;
  for (const auto& part : relative)
    if (part == "..") return false;
  return true;
}

// Removes `folder`'s empty subfolders, deepest first, and `folder` itself when that leaves it empty.
void remove_empty_folders(const std::filesystem::path& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec) || std::filesystem::is_symlink(folder, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) remove_empty_folders(entry.path());
  if (std::filesystem::is_empty(folder, ec)) std::filesystem::remove(folder, ec);
}

}  // namespace

void remove_previous_report(const std::filesystem::path& out_dir) {
  std::ifstream in(out_dir / kManifestName, std::ios::binary);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json listed = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!listed.is_array()) return;  // not a manifest this program wrote: touch nothing
  std::error_code ec;
  for (const nlohmann::json& entry : listed) {
    if (!entry.is_string()) continue;
    const std::filesystem::path relative = std::filesystem::path(entry.get<std::string>()).lexically_normal();
    if (!inside_folder(relative)) continue;
    const std::filesystem::path file = out_dir / relative;
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec))) std::filesystem::remove(file, ec);
  }
  for (const char* folder : kCaseFolders) remove_empty_folders(out_dir / folder);
}

std::set<std::string> case_files_in(const std::filesystem::path& out_dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (const char* folder : kCaseFolders) {
    if (!std::filesystem::is_directory(out_dir / folder, ec)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(out_dir / folder, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec)) files.insert(it->path().lexically_relative(out_dir).generic_string());
  }
  return files;
}

ReportFiles write_report_files(const Report& report) {
  std::filesystem::create_directories(report.out_dir);
  ReportFiles files{report.out_dir / "ulp.json", report.out_dir / "index.html", report.out_dir / kManifestName};
  write_text(files.json, to_json(report).dump(2) + "\n");
  write_text(files.html, render_html(report));
  nlohmann::json manifest = nlohmann::json::array({"ulp.json", "index.html", kManifestName});
  for (const std::string& file : report.written_files) manifest.push_back(file);
  write_text(files.manifest, manifest.dump(1) + "\n");
  return files;
}

}  // namespace pacheck::reports
