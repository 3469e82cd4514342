// Case files: one whole problem plus the knobs it ran with, as versioned JSON, so any failure can be saved and
// replayed against any variant. Format: problem/CASE_FORMAT.md.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck {

// Text from a case file (its note) safe for a terminal: control characters, ESC included, become \xNN; printable
// ASCII and UTF-8 stay.
std::string terminal_safe(std::string_view text);

// The newest version this build reads and writes; it reads every version from 1 up and writes the lowest that
// holds the case (case_format_version): 2 adds the logit options and fp8 caches (CASE_FORMAT.md, "Versioning").
inline constexpr int kCaseFormatVersion = 2;
int case_format_version(const Problem& problem);

struct Case {
  Problem problem;
  Knobs knobs;
  std::string note;  // free text: what found it, which variant failed, the RapidCheck reproduce string
};

class CaseFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string case_to_json(const Case& c);
// Throws CaseFileError naming what is wrong; the problem it returns is validated.
Case case_from_json(std::string_view text);

void write_case_file(const std::filesystem::path& path, const Case& c);
Case read_case_file(const std::filesystem::path& path);

}  // namespace pacheck
