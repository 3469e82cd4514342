// What a report holds (report.h): verdicts, merged figures, the comparison's verdict.
#include "reports/report.h"

#include <algorithm>

namespace pacheck::reports {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::passed: return "pass";
    case Verdict::failed: return "fail";
    case Verdict::gave_up: return "gave up";
    case Verdict::error: return "error";
  }
  return "?";
}

const char* status_name(GuaranteeCheck::Status status) {
  switch (status) {
    case GuaranteeCheck::Status::held: return "held";
    case GuaranteeCheck::Status::failed: return "failed";
    case GuaranteeCheck::Status::not_applicable: return "not applicable";
    case GuaranteeCheck::Status::not_in_catalogue: return "not in the catalogue";
    case GuaranteeCheck::Status::not_run: return "not run";
  }
  return "?";
}

bool CellReport::passed() const {
  return std::all_of(properties.begin(), properties.end(),
                     [](const PropertyOutcome& p) { return p.verdict == Verdict::passed; });
}

bool VariantReport::passed() const {
  return !skipped && std::all_of(cells.begin(), cells.end(), [](const CellReport& c) { return c.passed(); });
}

int VariantReport::cases() const {
  int total = 0;
  for (const CellReport& c : cells) total += c.cases;
  return total;
}

namespace {

// One figure of every cell of a dtype, merged over modes.
template <class Figure>
Figure merged(const std::vector<CellReport>& cells, DType dtype, Figure CellReport::*figure) {
  Figure out;
  for (const CellReport& c : cells)
    if (c.dtype == dtype) out.merge(c.*figure);
  return out;
}

}  // namespace

UlpHistogram VariantReport::histogram(DType dtype) const { return merged(cells, dtype, &CellReport::histogram); }

RatioHistogram VariantReport::ratio_histogram(DType dtype) const {
  return merged(cells, dtype, &CellReport::ratio_histogram);
}

ShapeBreakdown VariantReport::breakdown(DType dtype) const { return merged(cells, dtype, &CellReport::breakdown); }

bool Comparison::worse() const {
  return std::any_of(variants.begin(), variants.end(), [](const VariantComparison& v) { return v.worse; });
}

const CellReport* VariantReport::worst_cell() const {
  const CellReport* worst = nullptr;
  for (const CellReport& c : cells)
    if (!worst || c.worst_normalized > worst->worst_normalized) worst = &c;
  return worst;
}

bool Report::non_mutants_passed() const {
  return std::all_of(variants.begin(), variants.end(),
                     [](const VariantReport& v) { return v.skipped || v.capabilities.is_mutant || v.passed(); });
}

}  // namespace pacheck::reports
