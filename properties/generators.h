// RapidCheck generators for paged-attention problems, each reaching corners where paged kernels break; they shrink
// toward small, plain problems.
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "problem/knobs.h"
#include "properties/problem_spec.h"
#include "variants/variant.h"

namespace pacheck::gen {

// What may be drawn; the defaults keep a case cheap enough for hundreds per property on two cores.
struct Limits {
  std::vector<DType> dtypes = {DType::f32, DType::f16, DType::bf16};
  std::vector<Mode> modes = {Mode::decode, Mode::prefill, Mode::continuation};
  int max_sequences = 4;
  int max_decode_context = 600;   // decode rows are O(context)
  int max_prefill_context = 96;   // prefill is O(context^2)
  bool real_head_dims = true;     // include 64 .. 256
  bool poison = true;
  int max_head_dim = 256;
  // Head dims a variant cannot take are never drawn.
  std::function<bool(int)> head_dim_supported = [](int) { return true; };
  // When not empty, the only block sizes and GQA ratios drawn.
  std::vector<int> block_sizes;
  std::vector<int> gqa_ratios;
  // Only what serving engines run: bf16/fp16 where allowed, real head dims (and 40, 48), block sizes 16, 32, 64,
  // tiles and splits multiples of 16: the general draw rarely reaches these, the tensor-core paths' only inputs.
  bool engine_shapes = false;
  // Kernel choices every drawn case pins (Knobs::pins).
  KernelPins pins;
  // The logit options drawn (none by default, as Capabilities declares none).
  LogitOptionSupport logit_options;
  // The fp8 cache formats drawn (empty: none), with the query dtypes and head dims these allow (as Capabilities).
  std::vector<Fp8Format> fp8_caches;
  std::vector<DType> fp8_query_dtypes;
  int fp8_head_dim_multiple = 1;
};

// An index in [0, n), uniform at every size (rc::gen::inRange favours small values at small sizes, which skews
// categorical choices), shrinking toward 0.
inline rc::Gen<std::size_t> uniform_index(std::size_t n) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::size_t>(0, n));
}

// Picks one of `values`, shrinking toward the first: list the simplest first.
template <typename T>
rc::Gen<T> pick(std::vector<T> values) {
  return rc::gen::map(uniform_index(values.size()), [values](std::size_t i) { return values[i]; });
}

// Draws from one of the weighted generators, shrinking toward the first (rc::gen::weightedOneOf does not shrink
// across alternatives), then by the chosen one's own shrinks.
template <typename T>
rc::Gen<T> weighted(std::vector<std::pair<int, rc::Gen<T>>> alternatives) {
  int total = 0;
  for (const auto& a : alternatives) total += a.first;
  return rc::gen::exec([alternatives, total] {
    int ticket = static_cast<int>(*uniform_index(static_cast<std::size_t>(total)));
    std::size_t i = 0;
    while (ticket >= alternatives[i].first) ticket -= alternatives[i++].first;
    return *alternatives[i].second;
  });
}

rc::Gen<DType> dtype(const Limits& limits);
// Head dims real models use (64, 80, 96, 112, 120, 128, 192, 256) and small odd ones.
rc::Gen<int> head_dim(const Limits& limits);
// 1 to 64, non-powers of two included (engine shapes: 16, 32, 64).
rc::Gen<int> block_size(const Limits& limits = {});
// GQA ratio 1 (MHA), 2..8 (3, 5, 6, 7 included); the KV head count 1 (MQA) to 4.
rc::Gen<int> gqa_ratio(const Limits& limits = {});
rc::Gen<int> num_kv_heads();
// Context lengths biased toward the ragged-tail corners: 1, bs-1, bs, bs+1, multiples, and long.
rc::Gen<int> context_len(int block_size, int max_context);
rc::Gen<SequenceSpec> sequence(Mode mode, int block_size, const Limits& limits);
rc::Gen<ValueKind> value_kind();
rc::Gen<Poison> poison();
// Each option the limits allow in about one case in four, independently, at one of its corners; shrinks to none.
rc::Gen<LogitOptionSpec> logit_options(const Limits& limits);
// An fp8 cache in a fifth of cases when the limits take one, at each scale corner; shrinks toward none.
rc::Gen<Fp8Spec> fp8_cache(const Limits& limits);
rc::Gen<ProblemSpec> problem_spec(const Limits& limits = {});
// Tile sizes from 1 to beyond the history, split sizes and counts (engine shapes: multiples of 16, no counts).
rc::Gen<Knobs> knobs(int max_context, const Limits& limits = {});

}  // namespace pacheck::gen

namespace pacheck {
// How RapidCheck prints generated values in a counterexample.
void showValue(const ProblemSpec& spec, std::ostream& os);
void showValue(const Knobs& knobs, std::ostream& os);
void showValue(WindowChoice choice, std::ostream& os);  // a law's drawn window, named in a shrunk failure
}  // namespace pacheck
