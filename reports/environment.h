// Where a report was made: the source revision, the compiler, the CUDA device, the time. A figure means little
// without the revision and the device it was measured on.
#pragma once

#include <filesystem>
#include <string>

#include "reports/report.h"

namespace pacheck::reports {

// `source_root` is the checkout git is asked about; `command_line` is recorded as given.
Environment collect_environment(const std::filesystem::path& source_root, const std::string& command_line);

}  // namespace pacheck::reports
