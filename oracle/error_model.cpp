#include "oracle/error_model.h"

#include <cmath>
#include <limits>

namespace pacheck {

double gamma_n(double n, double u) {
  const double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : std::numeric_limits<double>::infinity();
}

ElementBound element_bound(const ErrorModel& model, const OracleResult& oracle, std::size_t element, DType dtype) {
  constexpr double u = kFp32UnitRoundoff;
  const RowCondition& row = oracle.rows[element / (oracle.out.size() / oracle.rows.size())];
  const double o = std::fabs(oracle.out[element]);
  const double c = oracle.centered_v[element];

  const double largest_eps =
      u * (model.logit_coefficient * row.max_logit_magnitude + 2 * row.max_spread) + model.weight_error * u;
  const double logit_term = u * (model.logit_coefficient * oracle.logit_centered_v[element] +
                                 2 * oracle.spread_centered_v[element]) +
                            model.weight_error * u * c;
  const double second_order = std::expm1(2 * largest_eps) - 2 * largest_eps;
  const double accumulation =
      gamma_n(model.accumulation_chain, model.accumulator_unit_roundoff) * (oracle.abs_weighted_v[element] + o);
  // Below the normal range: 2^-150 per rounding of the accumulator and of a weight (at most w), times |v_tj|.
  const double underflow = model.accumulation_chain * 0x1p-149 +
                           2 * model.weight_error * model.weight_underflow * oracle.abs_sum_v[element];

  ElementBound b;
  b.fp32_error = logit_term + second_order * c + accumulation + u * o + underflow + model.absolute_error;
  b.bound = b.fp32_error;
  if (dtype != DType::f32) b.bound += 0.5 * ulp_of(o + b.fp32_error, dtype);
  return b;
}

}  // namespace pacheck
