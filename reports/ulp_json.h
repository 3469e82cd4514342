// ulp.json: the machine-readable form of a report. The schema is documented in reports/README.md; bump
// kUlpJsonSchemaVersion whenever a field changes meaning or disappears.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace pacheck::reports {

inline constexpr int kUlpJsonSchemaVersion = 3;

nlohmann::json to_json(const Report& report);

// Reads an earlier report's ulp.json; throws std::runtime_error naming the file when it cannot be read, is not a
// report, or has another schema version (its figures would mean other things).
nlohmann::json read_ulp_json(const std::filesystem::path& file);

// The report `after` against `before`, both as to_json wrote them. Variants pair by name; `pairs` maps a variant of
// `after` to the name of its counterpart in `before` (a renamed kernel, or a mutant against its correct kernel).
Comparison compare_reports(const nlohmann::json& before, const nlohmann::json& after,
                           const std::map<std::string, std::string>& pairs, const std::string& old_file);

// A figure as JSON: finite numbers as numbers, infinities and NaN as the strings "inf", "-inf", "nan" (JSON has
// no number for them, and a reader must not mistake them for 0 or null).
nlohmann::json json_number(double value);

}  // namespace pacheck::reports
