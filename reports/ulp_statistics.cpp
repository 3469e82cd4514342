// The report's statistics (ulp_statistics.h).
#include "reports/ulp_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "properties/catalogue.h"

namespace pacheck::reports {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// NaN compares as +infinity, so a NaN error / bound is the worst there is.
double worse_of(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kInf;
  return std::max(a, b);
}

// "1K" for 1024, "1M" for 2^20: short axis labels for a power of two.
std::string power_of_two_text(int power) {
  if (power >= 20) return std::to_string(1L << (power - 20)) + "M";
  if (power >= 10) return std::to_string(1L << (power - 10)) + "K";
  return std::to_string(1L << power);
}

// Nearest rank: the ceil(q * n)-th smallest of n values (at least the first).
std::uint64_t nearest_rank(double q, std::uint64_t n) {
  const double wanted = std::ceil(q * static_cast<double>(n));
  return wanted < 1 ? 1 : static_cast<std::uint64_t>(wanted);
}

}  // namespace

Log2Histogram::Log2Histogram(int lowest_power, int largest_power)
    : lowest_(lowest_power), largest_(largest_power) {
  counts_.assign(static_cast<std::size_t>(bins()), 0);
  worst_.assign(static_cast<std::size_t>(bins()), 0);
}

int Log2Histogram::bin_of(double value) const {
  if (!std::isfinite(value)) return non_finite_bin();
  value = std::fabs(value);
  if (value == 0) return 0;
  if (value <= std::ldexp(1.0, lowest_)) return 1;
  // value = m * 2^e with m in [0.5, 1): value is at most 2^e, and at most 2^(e-1) exactly when m = 0.5.
  int e = 0;
  const double m = std::frexp(value, &e);
  const int power = m == 0.5 ? e - 1 : e;  // the smallest k with value <= 2^k, k > lowest_
  return power > largest_ ? beyond_bin() : 1 + power - lowest_;
}

double Log2Histogram::upper_edge(int bin) const {
  if (bin == 0) return 0;
  if (bin >= beyond_bin()) return kInf;
  return std::ldexp(1.0, lowest_ + bin - 1);
}

std::string Log2Histogram::label(int bin) const {
  if (bin == 0) return "0";
  if (bin == non_finite_bin()) return "non-finite";
  if (bin == beyond_bin())
    return largest_ >= 0 ? ">" + std::to_string(1L << largest_) : ">2^" + std::to_string(largest_);
  const int power = lowest_ + bin - 1;
  return power >= 0 ? "<=" + std::to_string(1L << power) : "<=2^" + std::to_string(power);
}

std::string Log2Histogram::short_label(int bin) const {
  if (bin == 0) return "0";
  if (bin == non_finite_bin()) return "NaN";
  if (bin == beyond_bin()) return ">" + power_of_two_text(largest_);
  const int power = lowest_ + bin - 1;
  return power >= 0 ? power_of_two_text(power) : "1/" + power_of_two_text(-power);
}

void Log2Histogram::add(double value, double normalized_error, std::uint64_t count) {
  if (count == 0) return;
  const auto bin = static_cast<std::size_t>(bin_of(value));
  counts_[bin] += count;
  worst_[bin] = worse_of(worst_[bin], normalized_error);
}

void Log2Histogram::merge(const Log2Histogram& other) {
  if (other.lowest_ != lowest_ || other.largest_ != largest_)
    throw std::invalid_argument("merging histograms of different bins");
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
    worst_[i] = worse_of(worst_[i], other.worst_[i]);
  }
}

std::uint64_t Log2Histogram::total() const {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts_) total += c;
  return total;
}

double Log2Histogram::quantile_at_most(double q) const {
  const std::uint64_t n = total();
  if (n == 0) return 0;
  const std::uint64_t rank = nearest_rank(q, n);
  std::uint64_t seen = 0;
  for (int bin = 0; bin < bins(); ++bin) {
    seen += counts_[static_cast<std::size_t>(bin)];
    if (seen >= rank) return upper_edge(bin);
  }
  return kInf;
}

void Distribution::add(double value, std::uint64_t count) {
  if (count == 0) return;
  if (std::isnan(value)) value = kInf;
  counts_[value] += count;
  size_ += count;
}

double Distribution::quantile(double q) const {
  if (size_ == 0) return 0;
  const std::uint64_t rank = nearest_rank(q, size_);
  std::uint64_t seen = 0;
  for (const auto& [value, count] : counts_) {
    seen += count;
    if (seen >= rank) return value;
  }
  return counts_.rbegin()->first;
}

void BucketStatistics::add(double normalized_error, double scaled_ulps) {
  ++elements;
  normalized.add(normalized_error, normalized_error);
  worst_normalized = worse_of(worst_normalized, normalized_error);
  worst_scaled_ulps = worse_of(worst_scaled_ulps, scaled_ulps);
}

void BucketStatistics::merge(const BucketStatistics& other) {
  elements += other.elements;
  normalized.merge(other.normalized);
  worst_normalized = worse_of(worst_normalized, other.worst_normalized);
  worst_scaled_ulps = worse_of(worst_scaled_ulps, other.worst_scaled_ulps);
}

int ShapeBreakdown::bucket_of(int size) {
  int bucket = 0;
  while (bucket < 62 && (1L << bucket) < size) ++bucket;
  return bucket;
}

std::string ShapeBreakdown::bucket_label(int bucket) {
  if (bucket <= 1) return std::to_string(1L << bucket);
  return std::to_string((1L << (bucket - 1)) + 1) + "-" + std::to_string(1L << bucket);
}

void ShapeBreakdown::merge(const ShapeBreakdown& other) {
  for (int d = 0; d < kDimensionCount; ++d)
    for (const auto& [bucket, stats] : other.dimensions[d]) dimensions[d][bucket].merge(stats);
  for (const auto& [names, stats] : other.features) features[names].merge(stats);
}

void CellStatistics::observe(const CaseObservation& o) {
  if (!o.agreement) return;
  const Agreement& a = *o.agreement;
  const Problem& p = o.problem;
  ++compared_outputs_;
  elements_ += a.elements;
  if (a.ulps.size() == a.elements && a.scaled_ulps.size() == a.elements && a.normalized.size() == a.elements) {
    const int head_dim = std::max(p.head_dim, 1);
    const int gqa = p.num_kv_heads > 0 ? p.num_query_heads / p.num_kv_heads : p.num_query_heads;
    BucketStatistics* const problem_buckets[] = {&breakdown_.dimensions[0][ShapeBreakdown::bucket_of(p.head_dim)],
                                                 &breakdown_.dimensions[1][ShapeBreakdown::bucket_of(p.block_size)],
                                                 &breakdown_.dimensions[2][ShapeBreakdown::bucket_of(gqa)],
                                                 &breakdown_.features[feature_names(p)]};
    // Rows run [query token][query head]; a row's context length is its sequence's.
    const auto rows_of = [&p](std::size_t sequence) {
      return static_cast<std::size_t>(p.sequences[sequence].num_queries) * static_cast<std::size_t>(p.num_query_heads);
    };
    std::size_t sequence = 0;
    std::size_t rows_before_sequence = 0;
    for (std::size_t e = 0; e < a.elements; ++e) {
      const double ratio = a.normalized[e];
      const double scaled = a.scaled_ulps[e];
      histogram_.add(scaled, ratio);
      ratio_histogram_.add(ratio, ratio);
      scaled_ulps_.add(scaled);
      raw_ulps_.add(a.ulps[e]);
      for (BucketStatistics* bucket : problem_buckets) bucket->add(ratio, scaled);
      const std::size_t row = e / static_cast<std::size_t>(head_dim);
      while (sequence + 1 < p.sequences.size() && row >= rows_before_sequence + rows_of(sequence))
        rows_before_sequence += rows_of(sequence++);
      const int context = sequence < p.sequences.size() ? p.sequences[sequence].context_len : 1;
      breakdown_.dimensions[3][ShapeBreakdown::bucket_of(context)].add(ratio, scaled);
    }
  } else {
    // The output had the wrong size: no element can be compared, so every one counts as wrong.
    histogram_.add(kInf, kInf, a.elements);
    ratio_histogram_.add(kInf, kInf, a.elements);
    scaled_ulps_.add(kInf, a.elements);
    raw_ulps_.add(kInf, a.elements);
  }
  const double normalized = a.worst.normalized();
  tightness_.add(normalized);
  const bool worse = !worst_ || normalized > worst_->element.normalized() ||
                     (std::isnan(normalized) && !std::isnan(worst_->element.normalized()));
  if (worse) {
    const std::string position = a.worst.element < p.output_size() ? element_position(p, a.worst.element)
                                                                    : std::string("(output size mismatch)");
    worst_ = WorstCase{o.property, o.problem, o.knobs, a.worst, position};
  }
}

}  // namespace pacheck::reports
