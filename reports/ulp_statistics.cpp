#include "reports/ulp_statistics.h"

#include <cmath>
#include <limits>

#include "properties/catalogue.h"

namespace pacheck::reports {

int UlpHistogram::bin_of(double ulps) {
  if (!std::isfinite(ulps)) return kNonFiniteBin;
  ulps = std::fabs(ulps);
  if (ulps == 0) return 0;
  if (ulps <= 1) return 1;
  // ulps = m * 2^e with m in [0.5, 1): ulps is at most 2^e, and at most 2^(e-1) exactly when m = 0.5.
  int e = 0;
  const double m = std::frexp(ulps, &e);
  const int power = m == 0.5 ? e - 1 : e;  // the smallest k with ulps <= 2^k, k >= 1
  return power > kLargestPower ? kBeyondBin : 1 + power;
}

std::string UlpHistogram::label(int bin) {
  if (bin == 0) return "0";
  if (bin == kNonFiniteBin) return "non-finite";
  if (bin == kBeyondBin) return ">" + std::to_string(1L << kLargestPower);
  return "<=" + std::to_string(1L << (bin - 1));
}

std::string UlpHistogram::short_label(int bin) {
  if (bin == 0) return "0";
  if (bin == kNonFiniteBin) return "NaN";
  if (bin == kBeyondBin) return ">1M";
  const int power = bin - 1;
  if (power >= 20) return std::to_string(1L << (power - 20)) + "M";
  if (power >= 10) return std::to_string(1L << (power - 10)) + "K";
  return std::to_string(1L << power);
}

void UlpHistogram::add(double ulps, std::uint64_t count) { counts_[static_cast<std::size_t>(bin_of(ulps))] += count; }

void UlpHistogram::merge(const UlpHistogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

std::uint64_t UlpHistogram::total() const {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts_) total += c;
  return total;
}

void Distribution::add(double value, std::uint64_t count) {
  if (count == 0) return;
  if (std::isnan(value)) value = std::numeric_limits<double>::infinity();
  counts_[value] += count;
  size_ += count;
}

double Distribution::quantile(double q) const {
  if (size_ == 0) return 0;
  // Nearest rank: the ceil(q * n)-th smallest value (at least the first).
  const double wanted = std::ceil(q * static_cast<double>(size_));
  const std::uint64_t rank = wanted < 1 ? 1 : static_cast<std::uint64_t>(wanted);
  std::uint64_t seen = 0;
  for (const auto& [value, count] : counts_) {
    seen += count;
    if (seen >= rank) return value;
  }
  return counts_.rbegin()->first;
}

void CellStatistics::observe(const CaseObservation& o) {
  if (!o.agreement) return;
  const Agreement& a = *o.agreement;
  ++compared_outputs_;
  elements_ += a.elements;
  if (a.ulps.size() == a.elements) {
    for (double u : a.ulps) {
      histogram_.add(u);
      ulps_.add(u);
    }
  } else {
    // The output had the wrong size: no element can be compared, so every one counts as wrong.
    histogram_.add(std::numeric_limits<double>::infinity(), a.elements);
    ulps_.add(std::numeric_limits<double>::infinity(), a.elements);
  }
  const double normalized = a.worst.normalized();
  tightness_.add(normalized);
  const bool worse = !worst_ || normalized > worst_->element.normalized() ||
                     (std::isnan(normalized) && !std::isnan(worst_->element.normalized()));
  if (worse) {
    const std::string position = a.worst.element < o.problem.output_size() ? element_position(o.problem, a.worst.element)
                                                                            : std::string("(output size mismatch)");
    worst_ = WorstCase{o.property, o.problem, o.knobs, a.worst, position};
  }
}

}  // namespace pacheck::reports
