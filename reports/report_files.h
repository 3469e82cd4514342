// Writes a report's two files into its folder: ulp.json (ulp_json.h) and index.html (html_page.h).
#pragma once

#include <filesystem>

#include "reports/report.h"

namespace pacheck::reports {

struct ReportFiles {
  std::filesystem::path json;
  std::filesystem::path html;
};

// Throws std::runtime_error naming the file it could not write.
ReportFiles write_report_files(const Report& report);

}  // namespace pacheck::reports
