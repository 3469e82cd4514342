// The statistics a report keeps of one variant in one dtype and mode: log-scale histograms of every element's
// scaled ulps and error / bound, exact percentiles, a breakdown by problem shape, and the worst case, kept whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"
#include "properties/agreement.h"

namespace pacheck {
struct CaseObservation;  // properties/catalogue.h, not included: the reports' headers stay free of RapidCheck
}  // namespace pacheck

namespace pacheck::reports {

// Values binned on a log scale: exactly 0, (0, 2^lo], (2^lo, 2^(lo+1)], ..., (2^(hi-1), 2^hi], beyond 2^hi, and not
// finite. Each bin keeps its elements' largest error / bound, so a bar is coloured by what the verdict uses.
class Log2Histogram {
 public:
  Log2Histogram(int lowest_power, int largest_power);

  int bins() const { return largest_ - lowest_ + 4; }
  int beyond_bin() const { return bins() - 2; }
  int non_finite_bin() const { return bins() - 1; }
  int bin_of(double value) const;
  // "0", "<=1", "<=2", ..., ">1048576", "non-finite"; below 1: "<=2^-3".
  std::string label(int bin) const;
  // Axis labels: "0", "1/8", "1/2", "1", "2", ..., "512", "1K", ..., "1M", ">1M", "NaN".
  std::string short_label(int bin) const;

  void add(double value, double normalized_error, std::uint64_t count = 1);
  void merge(const Log2Histogram& other);  // throws std::invalid_argument for a histogram of other bins
  std::uint64_t count(int bin) const { return counts_.at(static_cast<std::size_t>(bin)); }
  // The bin's largest error / bound (NaN counts as +infinity); 0 when empty.
  double worst_normalized(int bin) const { return worst_.at(static_cast<std::size_t>(bin)); }
  std::uint64_t total() const;
  // The upper edge of the bin holding the nearest-rank q-quantile (at least a fraction q is <= it); 0 when empty.
  double quantile_at_most(double q) const;

 private:
  double upper_edge(int bin) const;
  int lowest_;
  int largest_;
  std::vector<std::uint64_t> counts_;
  std::vector<double> worst_;
};

// Scaled ulps: 0, <=1, <=2, ..., <=2^20, beyond, non-finite.
struct UlpHistogram : Log2Histogram {
  UlpHistogram() : Log2Histogram(0, 20) {}
};

// Error / bound: 0, <=2^-16, ..., <=1/2, <=1 (the verdict's line), <=2, ..., <=2^16, beyond, non-finite.
struct RatioHistogram : Log2Histogram {
  RatioHistogram() : Log2Histogram(-16, 16) {}
};

// A multiset with exact nearest-rank quantiles, as a value -> count map (ulps repeat heavily, so it stays small).
// NaN counts as +infinity.
class Distribution {
 public:
  void add(double value, std::uint64_t count = 1);
  std::uint64_t size() const { return size_; }
  // The smallest v with at least a fraction q of the values <= v; 0 when empty.
  double quantile(double q) const;
  double max() const { return counts_.empty() ? 0 : counts_.rbegin()->first; }

 private:
  std::map<double, std::uint64_t> counts_;
  std::uint64_t size_ = 0;
};

// The elements of one bucket of a shape dimension (head dims 5-8, say).
struct BucketStatistics {
  std::uint64_t elements = 0;
  RatioHistogram normalized;  // error / bound, for its quantiles
  double worst_normalized = 0;
  double worst_scaled_ulps = 0;
  void add(double normalized_error, double scaled_ulps);
  void merge(const BucketStatistics& other);
};

// Error by head dim, block size, GQA ratio and the row's context length, each in power-of-two buckets (1, 2, 3-4,
// 5-8, ...), so a precision loss that grows with one shows as a trend; and by the serving features used.
struct ShapeBreakdown {
  static constexpr const char* kDimensions[] = {"head_dim", "block_size", "gqa_ratio", "context_len"};
  static constexpr int kDimensionCount = 4;
  // The bucket of a positive size: 0 for 1, k for sizes in (2^(k-1), 2^k].
  static int bucket_of(int size);
  static std::string bucket_label(int bucket);  // "1", "2", "3-4", "5-8", ...
  std::map<int, BucketStatistics> dimensions[kDimensionCount];
  // By feature_names ("plain", "window sinks", ...): each element once, under its problem's whole set.
  std::map<std::string, BucketStatistics> features;
  void merge(const ShapeBreakdown& other);
};

// The compared output with the largest error / bound, with what saving it as a case file needs.
struct WorstCase {
  std::string property;
  Problem problem;
  Knobs knobs;
  ElementError element;
  std::string position;  // "seq 0 token 3 (position 17) head 2 dim 5"
};

// Collects the observations of every property run in one report cell (variant, dtype, mode).
class CellStatistics {
 public:
  // One without an agreement (a property comparing runs with each other) adds nothing.
  void observe(const CaseObservation& observation);

  const UlpHistogram& histogram() const { return histogram_; }  // scaled ulps
  const RatioHistogram& ratio_histogram() const { return ratio_histogram_; }
  const Distribution& scaled_ulps() const { return scaled_ulps_; }
  const Distribution& raw_ulps() const { return raw_ulps_; }
  // Each compared output's worst error / bound.
  const Distribution& tightness() const { return tightness_; }
  const ShapeBreakdown& breakdown() const { return breakdown_; }
  std::size_t compared_outputs() const { return compared_outputs_; }
  std::size_t elements() const { return elements_; }
  const std::optional<WorstCase>& worst() const { return worst_; }

 private:
  UlpHistogram histogram_;
  RatioHistogram ratio_histogram_;
  Distribution scaled_ulps_;
  Distribution raw_ulps_;
  Distribution tightness_;
  ShapeBreakdown breakdown_;
  std::size_t compared_outputs_ = 0;
  std::size_t elements_ = 0;
  std::optional<WorstCase> worst_;
};

}  // namespace pacheck::reports
