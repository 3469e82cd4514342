// ulp.json: the machine-readable form of a report. The schema is documented in reports/README.md; bump
// kUlpJsonSchemaVersion whenever a field changes meaning or disappears.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace pacheck::reports {

inline constexpr int kUlpJsonSchemaVersion = 2;

nlohmann::json to_json(const Report& report);

// A figure as JSON: finite numbers as numbers, infinities and NaN as the strings "inf", "-inf", "nan" (JSON has
// no number for them, and a reader must not mistake them for 0 or null).
nlohmann::json json_number(double value);

}  // namespace pacheck::reports
