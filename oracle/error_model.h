// The first-order error model that turns the oracle's condition quantities into a per-element error bound.
//
// Derivation (docs: oracle/ERROR_MODEL.md). Let u = 2^-24 be fp32's unit roundoff; every variant accumulates in
// fp32. For output element j of a row, with exact output o_j and the condition quantities of oracle.h:
//
//   logit errors   A kernel's logit for key t differs from the exact one by at most
//                    eps_t = u * (a * L_t + 2 * (m - s_t)) + w * u
//                  a * u * L_t   the fp32 dot product and the scale multiply (a = head_dim + 2 for a
//                                sequential dot; gamma_n ~ n u bounds an n-term sum of products),
//                  2u (m - s_t)  the subtraction s_t - m before exp, plus the subtractions of every later rescale
//                                (they telescope: their sum is at most m - s_t),
//                  w * u         exp's own relative error, compounded over each rescale or merge the key's
//                                weight passes through (a variant declares w from the oracle's record counts).
//                  To first order the output moves by sum_t p_t eps_t (v_tj - o_j), bounded by
//                    u * (a * CL_j + 2 * CM_j) + w * u * C_j.
//   second order   (e^{2E} - 1 - 2E) * C_j, with E the largest eps_t of the row: the exact remainder of
//                  p_t -> p_t e^{eps_t} / sum p e^{eps}, negligible unless logits are huge.
//   accumulation   Every term of the weighted-V accumulator and of the denominator passes through at most
//                  `chain` roundings, so they carry relative errors gamma_chain; the output moves by at most
//                  gamma_chain * (S_j + |o_j|).
//   division       u * |o_j| for the final acc / denominator.
//   underflow      chain * 2^-149 + 2 w weight_underflow A_j: weights and products that fall below fp32's normal
//                  range lose absolute, not relative, accuracy, at most 2^-150 per rounding; a weight's loss is
//                  multiplied by its |v_tj| (A_j = sum_t |v_tj|); the denominator is at least 1 (exp(0) of the max).
//   output dtype   half an ulp of fp16 / bf16 at |o_j| + error for the final conversion (fp32 outputs need none:
//                  the division already rounded to fp32).
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
  // The absolute error of one rounding of a weight below its format's normal range: 2^-150 in fp32; a kernel that
  // hands weights to hardware in a narrower format declares that format's (see ERROR_MODEL.md, "Underflow").
  double weight_underflow = 0x1p-150;
  // An absolute error the output may carry whatever its magnitude: a kernel that stores partial outputs in a
  // narrower format loses up to half that format's subnormal spacing where they fall below its normal range, and
  // merge weights that sum to 1 keep that loss at most one such half-spacing (ERROR_MODEL.md, "Declaring a model
  // for an external kernel"). 0 for pacheck's own kernels, which keep every partial in fp32.
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
