#include "properties/agreement.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace pacheck {

std::vector<int> oracle_split_sizes(const Problem& problem, const Knobs& knobs) {
  std::set<int> sizes;
  for (const Sequence& s : problem.sequences) sizes.insert(effective_split_size(knobs, s.context_len));
  return {sizes.begin(), sizes.end()};
}

Agreement compare_with_oracle(const Problem& p, const OracleResult& oracle, const Variant& variant,
                              const Knobs& knobs, const Output& output, const ModelRefinement& refine_model) {
  Agreement a;
  a.elements = output.size();
  if (output.size() != oracle.out.size()) {
    a.ok = false;
    a.violations = 1;
    a.worst.error = INFINITY;
    return a;
  }
  a.ulps.reserve(output.size());
  a.scaled_ulps.reserve(output.size());
  a.normalized.reserve(output.size());
  const int d = p.head_dim;
  ErrorModel model;
  std::size_t model_row = static_cast<std::size_t>(-1);
  for (std::size_t e = 0; e < output.size(); ++e) {
    if (e / d != model_row) {
      model_row = e / d;
      model = variant.error_model(p, oracle, model_row, knobs);
      if (refine_model) model = refine_model(model);
    }
    ElementError err;
    err.element = e;
    err.exact = oracle.out[e];
    err.rounded_exact = round_to_dtype(err.exact, p.dtype);
    err.got = output[e];
    const ElementBound bound = element_bound(model, oracle, e, p.dtype);
    err.bound = bound.bound;
    err.scale = std::max(std::fabs(err.rounded_exact), e < oracle.abs_weighted_v.size() ? oracle.abs_weighted_v[e] : 0.0);
    // An infinity also agrees where an fp32 value within the model rounds to it (rounding is monotone, so testing
    // the end of the allowed interval on its side suffices): an output just below the dtype's overflow threshold.
    const bool allowed_overflow =
        std::isinf(err.got) && round_to_dtype(err.exact + std::copysign(bound.fp32_error, err.got), p.dtype) == err.got;
    const bool same = (std::isnan(err.got) && std::isnan(err.exact)) ||
                      static_cast<double>(err.got) == err.rounded_exact || allowed_overflow;
    if (same) {
      // Correctly rounded (ulps 0): an overflow to the same infinity as the exact value's rounding is no error.
      err.error = std::isfinite(err.got) ? std::fabs(err.got - err.exact) : 0;
    } else {
      const auto or_inf = [](double x) { return std::isnan(x) ? INFINITY : x; };  // a NaN error is unbounded
      const double off = std::fabs(static_cast<double>(err.got) - err.rounded_exact);
      err.error = or_inf(std::fabs(static_cast<double>(err.got) - err.exact));
      err.ulps = or_inf(off / ulp_of(err.rounded_exact, p.dtype));
      err.scaled_ulps = or_inf(off / ulp_of(err.scale, p.dtype));
    }
    a.ulps.push_back(err.ulps);
    a.scaled_ulps.push_back(err.scaled_ulps);
    a.normalized.push_back(err.normalized());
    a.worst_ulps = std::max(a.worst_ulps, err.ulps);
    const bool violates = !same && !(err.error <= err.bound);
    if (violates) ++a.violations;
    // The worst element is a violation where there is one, the largest error / bound among its kind.
    const bool worst_violates = a.violations > (violates ? 1u : 0u);
    if (e == 0 || (violates && !worst_violates) ||
        (violates == worst_violates && err.normalized() > a.worst.normalized()))
      a.worst = err;
  }
  a.ok = a.violations == 0;
  return a;
}

std::string element_position(const Problem& p, std::size_t element) {
  const int d = p.head_dim;
  const std::size_t row = element / d;
  const int head = static_cast<int>(row % p.num_query_heads);
  int query_row = static_cast<int>(row / p.num_query_heads);
  int s = 0;
  while (s + 1 < static_cast<int>(p.sequences.size()) && query_row >= p.sequences[s].num_queries) {
    query_row -= p.sequences[s].num_queries;
    ++s;
  }
  std::ostringstream out;
  out << "seq " << s << " token " << query_row << " (position " << p.sequences[s].first_query_position() + query_row
      << ") head " << head << " dim " << element % d;
  return out.str();
}

std::string describe_failure(const Problem& p, const Variant& variant, const Knobs& knobs, const Agreement& a) {
  std::ostringstream out;
  out.precision(10);
  out << "variant " << variant.name() << " disagrees with the oracle on " << a.violations << " of " << a.elements
      << " elements\n"
      << describe(p) << "knobs: tile_size=" << knobs.tile_size << " split_size=" << knobs.split_size
      << " num_splits=" << knobs.num_splits << "\n"
      << "worst element: " << element_position(p, a.worst.element) << "\n"
      << "  exact " << a.worst.exact << " (rounded to " << dtype_name(p.dtype) << ": " << a.worst.rounded_exact
      << "), got " << a.worst.got << ", error " << a.worst.error << ", bound " << a.worst.bound << " ("
      << a.worst.normalized() << "x), " << a.worst.ulps << " ulps\n";
  return out.str();
}

}  // namespace pacheck
