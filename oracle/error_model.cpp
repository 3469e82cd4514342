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
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const RowCondition& row = oracle.rows[element / (oracle.out.size() / oracle.rows.size())];
  const double o = std::fabs(oracle.out[element]);
  const double c = oracle.centered_v[element];

  const double largest_eps =
      u * (model.logit_coefficient * row.max_logit_magnitude + 2 * row.max_spread) + model.weight_error * u;
  const double logit_term = u * (model.logit_coefficient * oracle.logit_centered_v[element] +
                                 2 * oracle.spread_centered_v[element]) +
                            model.weight_error * u * c;
  const double second_order = std::expm1(2 * largest_eps) - 2 * largest_eps;
  // A logit error overflowing exp bounds nothing through C_j, even where C_j = 0 (0 x inf is NaN): a key whose exact
  // weight underflowed may then carry any weight.
  const double remainder = second_order < kInf ? second_order * c : kInf;
  const double gamma = gamma_n(model.accumulation_chain, model.accumulator_unit_roundoff);
  // A kernel returns a convex combination of the row's values, within D_j of o_j; summing and dividing with its own
  // weights costs at most (2 gamma + 2u) D_j more.
  const double any_weights = (1 + 2 * gamma + 2 * u) * oracle.max_deviation_v[element];
  const double weights = std::min(logit_term + remainder, any_weights);
  const double accumulation = gamma * (oracle.abs_weighted_v[element] + o);
  // Below the normal range: 2^-150 per accumulator rounding, and per weight rounding (at most w) times |v_tj|.
  const double underflow = model.accumulation_chain * 0x1p-149 +
                           2 * model.weight_error * model.weight_underflow * oracle.abs_sum_v[element];

  ElementBound b;
  b.fp32_error = weights + accumulation + u * o + underflow + model.absolute_error;
  b.bound = b.fp32_error;
  if (dtype != DType::f32) b.bound += 0.5 * ulp_of(o + b.fp32_error, dtype);
  return b;
}

}  // namespace pacheck
