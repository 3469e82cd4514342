// A problem as a handful of choices (shapes, placement, poison, values, logit options, a seed) that RapidCheck draws
// and shrinks; materialize() builds the Problem deterministically, the seed re-deriving the data for each shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck {

// What the Q, K and V data look like: each a corner where kernels break.
enum class ValueKind : std::uint8_t {
  normal,            // q, k, v ~ N(0, 1) scaled by `spread`: from flat to one-hot softmax
  all_negative,      // every logit negative and large: a running max initialised to 0 underflows
  extremely_negative,// logits near -1e4: only a subtracted max keeps exp nonzero
  identical_keys,    // every key equal: uniform weights, the output is the mean of V
  integer_valued,    // small integers: exact dot products, exact sums
  near_range,        // V near the dtype's (or fp32 accumulation's) largest magnitude
  below_sentinel,    // every logit below -6e4 at the default scale: a mask's finite sentinel (-1e4, -6e4) wins
};
const char* value_kind_name(ValueKind kind);

enum class Poison : std::uint8_t { none, nan, pos_inf, neg_inf, huge };
const char* poison_name(Poison poison);

// The logit options (problem.h) as corners, resolved against the materialised problem (block size, contexts,
// logit sizes) so a corner stays one while shapes shrink. Each enum's first value is absence.
enum class WindowChoice : std::uint8_t {
  none,
  one,          // every query sees only its own key
  block_size,   // the window's start falls on block boundaries
  context,      // one sequence's context: the query at its end sees every key, the others fewer
  beyond,       // longer than every context: a window that masks nothing
  inside,       // anywhere from 1 to the longest context
};
enum class SoftCapChoice : std::uint8_t {
  none,
  saturating,   // far below the logits: every capped logit is near +-cap
  curved,       // near the logits: bends them without flattening them
  gemma,        // 50, Gemma 2's attention cap, whatever the logits
  linear,       // far above the logits: tanh is in its linear part
};
enum class AlibiChoice : std::uint8_t {
  none,
  geometric,    // 2^(-8 (h + 1) / H), the ALiBi paper's slopes for H heads
  steep,        // 2^8 times those: biases that swamp the logits within a few keys
};
// A sink for one query head.
enum class SinkChoice : std::uint8_t {
  minus_infinity,  // no sink for this head
  among,           // inside the range of the row's logits
  far_above,       // above every logit: it takes nearly all the weight
  far_below,       // below every logit: its weight underflows
};
const char* window_choice_name(WindowChoice choice);
const char* soft_cap_choice_name(SoftCapChoice choice);
const char* alibi_choice_name(AlibiChoice choice);
const char* sink_choice_name(SinkChoice choice);

struct LogitOptionSpec {
  WindowChoice window = WindowChoice::none;
  SoftCapChoice soft_cap = SoftCapChoice::none;
  AlibiChoice alibi = AlibiChoice::none;
  // Query head h takes sinks[h % size]; empty: no sinks.
  std::vector<SinkChoice> sinks;

  bool any() const {
    return window != WindowChoice::none || soft_cap != SoftCapChoice::none || alibi != AlibiChoice::none ||
           !sinks.empty();
  }
};

// How an fp8 cache's scales follow from the largest referenced magnitude `amax` of K (and V).
enum class Fp8ScaleChoice : std::uint8_t {
  amax,           // per tensor, amax lands on the format's largest finite value (engines' calibration)
  amax_per_head,  // the same per KV head
  power_of_two,   // the power of two at or above amax / largest: dequantisation is exact
  underflowing,   // amax lands on the smallest normal: most values subnormal in fp8, many zero
};
const char* fp8_scale_choice_name(Fp8ScaleChoice choice);

struct Fp8Spec {
  std::optional<Fp8Format> format;  // none: the pools hold the problem's dtype
  Fp8ScaleChoice scales = Fp8ScaleChoice::amax;
};

struct SequenceSpec {
  int context_len = 1;
  int num_queries = 1;
};

struct ProblemSpec {
  DType dtype = DType::f32;
  int num_kv_heads = 1;
  int gqa_ratio = 1;
  int head_dim = 8;
  int block_size = 4;
  std::vector<SequenceSpec> sequences;
  int spare_blocks = 0;        // pool blocks no sequence references
  bool shared_prefix = false;  // later sequences reuse the first sequence's leading full blocks
  // Later sequences fork the first (parallel sampling): its blocks, partial tail included, with contexts no longer
  // than its, so a fork ending inside the shared tail has the first's keys right past its end.
  bool forked = false;
  int table_padding = 0;       // extra table entries past what each context needs
  bool padding_invalid = false;// padding holds invalid ids (-1, num_blocks, ...) instead of poisoned blocks
  Poison poison = Poison::none;// fills every slot no sequence references
  ValueKind values = ValueKind::normal;
  double spread = 1.0;         // logit scale for `normal`
  std::optional<float> explicit_scale;
  LogitOptionSpec options;
  // Quantises the pools, unreferenced slots too (poison becomes the format's NaN or inf), after the data and
  // options are drawn (so they are the same without it).
  Fp8Spec fp8;
  std::uint64_t seed = 0;
};

Problem materialize(const ProblemSpec& spec);
std::string describe(const ProblemSpec& spec);

}  // namespace pacheck
