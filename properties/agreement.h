// Comparing a variant's output with the oracle, element by element, against the variant's error bound.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "problem/knobs.h"
#include "variants/variant.h"

namespace pacheck {

struct ElementError {
  std::size_t element = 0;
  double exact = 0;           // the oracle's double value
  double rounded_exact = 0;   // ... correctly rounded to the output dtype
  float got = 0;
  double error = 0;           // |got - exact|
  double bound = 0;
  double ulps = 0;            // |got - rounded_exact| in ulps of the output dtype
  // The larger of |rounded_exact| and S_j = sum_t p_t |v_tj|, the size of the (possibly cancelling) terms summed.
  double scale = 0;
  double scaled_ulps = 0;     // |got - rounded_exact| in ulps of `scale`: free of cancellation's blow-up
  double normalized() const { return bound > 0 ? error / bound : (error == 0 ? 0 : INFINITY); }
};

struct Agreement {
  bool ok = true;
  std::size_t elements = 0;
  std::size_t violations = 0;
  ElementError worst;        // the element with the largest error / bound
  double worst_ulps = 0;
  // Per element, for reports' percentiles and histograms: raw ulps, scaled ulps and error / bound.
  std::vector<double> ulps;
  std::vector<double> scaled_ulps;
  std::vector<double> normalized;
};

// The split sizes the oracle must count records for, for split-K variants' error models.
std::vector<int> oracle_split_sizes(const Problem& problem, const Knobs& knobs);

// Checks every element of `output` against the oracle within the variant's bound. Both NaN, or exactly equal
// (infinities included), agree; so does an infinity that an fp32 value within the bound rounds to; NaN never agrees
// with a finite value. `refine_model` tightens the model where a case rules part of the error out (identical keys
// have identical rounded logits).
using ModelRefinement = std::function<ErrorModel(ErrorModel)>;
Agreement compare_with_oracle(const Problem& problem, const OracleResult& oracle, const Variant& variant,
                              const Knobs& knobs, const Output& output, const ModelRefinement& refine_model = {});

// Readable: the problem, the knobs and the worst element.
std::string describe_failure(const Problem& problem, const Variant& variant, const Knobs& knobs,
                             const Agreement& agreement);

// Row and column of an output element: "seq 1 token 0 head 3 dim 17".
std::string element_position(const Problem& problem, std::size_t element);

}  // namespace pacheck
