// The statistics a report keeps about one variant in one dtype and mode: a log-scale histogram of every output
// element's ulps, exact percentiles of the ulps and of each compared output's tightness (its worst error over
// bound), and the case behind the worst bound-normalised error, kept whole so it can be saved and replayed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "problem/knobs.h"
#include "problem/problem.h"
#include "properties/agreement.h"

namespace pacheck {
struct CaseObservation;  // properties/catalogue.h (declared here so the reports' headers stay free of RapidCheck)
}  // namespace pacheck

namespace pacheck::reports {

// Ulps binned on a log scale: exactly 0, (0, 1], (1, 2], (2, 4], ..., (2^19, 2^20], beyond 2^20, and not finite
// (a NaN or Inf where the oracle is finite). Raw ulps are integers except across a binade boundary, so the bins
// are "correctly rounded", "1 ulp", "2 ulps", "3-4 ulps" and so on.
class UlpHistogram {
 public:
  static constexpr int kLargestPower = 20;             // the last power-of-two bin ends at 2^20 ulps
  static constexpr int kBeyondBin = kLargestPower + 2;  // (2^20, inf)
  static constexpr int kNonFiniteBin = kBeyondBin + 1;
  static constexpr int kBins = kNonFiniteBin + 1;

  static int bin_of(double ulps);
  // "0", "<=1", "<=2", "<=4", ..., "<=1048576", ">1048576", "non-finite"
  static std::string label(int bin);
  // Short axis labels: "0", "1", "2", "4", ..., "512", "1K", ..., "1M", ">1M", "NaN".
  static std::string short_label(int bin);

  void add(double ulps, std::uint64_t count = 1);
  void merge(const UlpHistogram& other);
  std::uint64_t count(int bin) const { return counts_.at(static_cast<std::size_t>(bin)); }
  std::uint64_t total() const;

 private:
  std::array<std::uint64_t, kBins> counts_{};
};

// A multiset of values with exact nearest-rank quantiles. Values repeat heavily (ulps are mostly small integers),
// so a value -> count map stays small however many elements are added. NaN counts as +infinity.
class Distribution {
 public:
  void add(double value, std::uint64_t count = 1);
  std::uint64_t size() const { return size_; }
  // The smallest value v such that at least a fraction q of the values are <= v; 0 when empty.
  double quantile(double q) const;
  double max() const { return counts_.empty() ? 0 : counts_.rbegin()->first; }

 private:
  std::map<double, std::uint64_t> counts_;
  std::uint64_t size_ = 0;
};

// The compared output with the largest error over bound, with everything needed to save it as a case file.
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
  // Observations without an agreement (properties that compare runs with each other) add nothing.
  void observe(const CaseObservation& observation);

  const UlpHistogram& histogram() const { return histogram_; }
  const Distribution& ulps() const { return ulps_; }
  // Per compared output: its worst error / bound (how much of its bound the output used).
  const Distribution& tightness() const { return tightness_; }
  std::size_t compared_outputs() const { return compared_outputs_; }
  std::size_t elements() const { return elements_; }
  const std::optional<WorstCase>& worst() const { return worst_; }

 private:
  UlpHistogram histogram_;
  Distribution ulps_;
  Distribution tightness_;
  std::size_t compared_outputs_ = 0;
  std::size_t elements_ = 0;
  std::optional<WorstCase> worst_;
};

}  // namespace pacheck::reports
