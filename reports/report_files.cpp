#include "reports/report_files.h"

#include <fstream>
#include <stdexcept>

#include "reports/html_page.h"
#include "reports/ulp_json.h"

namespace pacheck::reports {
namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

ReportFiles write_report_files(const Report& report) {
  std::filesystem::create_directories(report.out_dir);
  ReportFiles files{report.out_dir / "ulp.json", report.out_dir / "index.html"};
  write_text(files.json, to_json(report).dump(2) + "\n");
  write_text(files.html, render_html(report));
  return files;
}

}  // namespace pacheck::reports
