// The first-order error model: the oracle's condition quantities to a per-element bound (oracle/ERROR_MODEL.md
// derives it). With u = 2^-24 (every variant accumulates in fp32), for output element j:
//   logit errors   eps_t = u * (a * L_t + 2 * (m - s_t)) + w * u: the dot product and scale (a = head_dim + 2 for
//                  a sequential dot), the subtractions before exp (they telescope to m - s_t), exp's error
//                  compounded over the rescales and merges (w, from the record counts); to first order
//                  u * (a * CL_j + 2 * CM_j) + w * u * C_j.
//   second order   (e^{2E} - 1 - 2E) * C_j, E the row's largest eps_t.
//   any weights    the two above capped at (1 + 2 gamma_chain + 2u) * D_j: whatever its weights, a kernel returns a
//                  convex combination of the row's values.
//   accumulation   gamma_chain * (S_j + |o_j|): each term passes at most `chain` roundings.
//   division       u * |o_j|.
//   underflow      chain * 2^-149 + 2 w weight_underflow A_j: roundings below the normal range lose absolutely.
//   output dtype   half an ulp of fp16 / bf16 at |o_j| + error (none for fp32).
#pragma once

#include <cstddef>

#include "oracle/oracle.h"
#include "problem/dtype.h"

namespace pacheck {

inline constexpr double kFp32UnitRoundoff = 0x1p-24;

// What a variant declares about its arithmetic, for one row and one set of knobs.
struct ErrorModel {
  double logit_coefficient = 0;   // a: logit error <= a * u * L_t
  double weight_error = 0;        // w: per-key relative weight error, in units of u
  double accumulation_chain = 0;  // roundings along any one term's path into the accumulator or denominator
  double accumulator_unit_roundoff = kFp32UnitRoundoff;
  double weight_underflow = 0x1p-150;  // one rounding of a weight below its format's normal range ("Underflow")
  // An absolute error whatever the output's magnitude, e.g. partials stored in a narrower format lose half its
  // subnormal spacing ("Declaring a model for an external kernel"). 0 for pacheck's own.
  double absolute_error = 0;
};

struct ElementBound {
  double bound = 0;        // |variant - exact| may not exceed this
  double fp32_error = 0;   // the part before the conversion to the output dtype
};

ElementBound element_bound(const ErrorModel& model, const OracleResult& oracle, std::size_t element, DType dtype);

// gamma_n = n u / (1 - n u), Higham's bound for n roundings; infinite once n u >= 1.
double gamma_n(double n, double unit_roundoff);

}  // namespace pacheck
