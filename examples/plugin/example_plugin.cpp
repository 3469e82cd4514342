// An example pacheck plugin: a CPU paged-attention kernel (a tiled online softmax read through the block table)
// written against include/pacheck/plugin.h alone. Copy this folder to start a plugin of your own kernel.
//
//   cmake -S examples/plugin -B build-plugin -DPACHECK_INCLUDE_DIR=<pacheck>/include && cmake --build build-plugin
//   pacheck check --plugin build-plugin/libexample_plugin.so
//
// Two variants of the one kernel: example_streaming declares the stock fp32_online_softmax error model,
// example_streaming_coefficients the same model as explicit coefficients and narrower shapes. Both compute every
// logit option of plugin.h and read fp8 KV caches (scales per tensor or per head).
//
// tests/plugin/ builds this file with one PACHECK_TEST_* definition each, to plant a bug or a fault; a copy can drop
// every #if that names one.
#include <pacheck/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <vector>

namespace {

// --- storage: fp32 is read as float; fp16 and bf16 arrive as 16-bit patterns ---

float from_f16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)  // inf or NaN
                                              : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float from_bf16(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, as pacheck's error models assume for the output.
std::uint16_t to_f16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above round to infinity
  if (magnitude < 0x38800000u) {                        // below 2^-14: a subnormal, in units of 2^-24
    float a;
    std::memcpy(&a, &magnitude, sizeof a);
    return static_cast<std::uint16_t>(sign | std::lrint(std::ldexp(a, 24)));  // lrint rounds to nearest even
  }
  std::uint32_t rebiased = magnitude - 0x38000000u;  // exponent bias 127 -> 15
  rebiased += 0x0fffu + ((rebiased >> 13) & 1u);     // round the 13 dropped bits to nearest even
  return static_cast<std::uint16_t>(sign | (rebiased >> 13));
}

std::uint16_t to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// An fp8 byte's value, exactly: e4m3 has bias 7, no infinities and NaN only at S.1111.111; e5m2 bias 15, IEEE specials.
float from_fp8(std::uint8_t b, std::uint32_t format) {
  const bool e4m3 = format == PACHECK_FP8_E4M3;
  const int mantissa_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exponent = (b & 0x7f) >> mantissa_bits, mantissa = b & ((1 << mantissa_bits) - 1);
  float magnitude;
  if (e4m3 && (b & 0x7f) == 0x7f)
    magnitude = NAN;
  else if (!e4m3 && exponent == 31)
    magnitude = mantissa != 0 ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits);
  else
    magnitude = std::ldexp(static_cast<float>((1 << mantissa_bits) + mantissa), exponent - bias - mantissa_bits);
  return (b & 0x80) != 0 ? -magnitude : magnitude;
}

// Element i of an array in the run's dtype.
float load(const void* data, std::int64_t i, std::uint32_t dtype) {
  if (dtype == PACHECK_DTYPE_F32) return static_cast<const float*>(data)[i];
  const std::uint16_t bits = static_cast<const std::uint16_t*>(data)[i];
  return dtype == PACHECK_DTYPE_F16 ? from_f16(bits) : from_bf16(bits);
}

void store(void* data, std::int64_t i, std::uint32_t dtype, float value) {
  if (dtype == PACHECK_DTYPE_F32)
    static_cast<float*>(data)[i] = value;
  else
    static_cast<std::uint16_t*>(data)[i] = dtype == PACHECK_DTYPE_F16 ? to_f16(value) : to_bf16(value);
}

// --- the kernel ---

constexpr int kMaxHeadDim = 256;

// A run's logit options, read only as far as the pacheck that wrote the arguments knows them (absent: off).
struct LogitOptions {
  float soft_cap = 0;                   // 0: none
  int window = 0;                       // 0: none
  const float* alibi_slopes = nullptr;  // per query head; null: none
  const float* sinks = nullptr;         // per query head; null: none
};

// The run's K and V storage: the dtype, or an fp8 cache (format and scales) when pacheck wrote one.
struct KvCache {
  std::uint32_t fp8 = 0;  // 0: the pools hold the dtype
  std::int32_t num_k_scales = 0, num_v_scales = 0;
  const float* k_scales = nullptr;
  const float* v_scales = nullptr;

  explicit KvCache(const pacheck_run_args& a) {
    if (!PACHECK_HAS_FIELD(&a, pacheck_run_args, v_scales) || a.fp8_cache == 0) return;
    fp8 = a.fp8_cache;
    num_k_scales = a.num_k_scales;
    k_scales = a.k_scales;
    num_v_scales = a.num_v_scales;
    v_scales = a.v_scales;
  }
  // KV head g's scale (one per tensor or per head).
  float k_scale(int g) const { return k_scales[num_k_scales == 1 ? 0 : g]; }
  float v_scale(int g) const { return v_scales[num_v_scales == 1 ? 0 : g]; }
  // Element i of a pool of KV head g: an fp8 value times the head's scale (one fp32 rounding), or the dtype's value.
  float load_k(const pacheck_run_args& a, std::int64_t i, int g) const {
    if (fp8 == 0) return load(a.k_pool, i, a.dtype);
#if defined(PACHECK_TEST_FP8_V_SCALE_ON_K)
    return from_fp8(static_cast<const std::uint8_t*>(a.k_pool)[i], fp8) * v_scale(g);  // K scaled by the V scale
#else
    return from_fp8(static_cast<const std::uint8_t*>(a.k_pool)[i], fp8) * k_scale(g);
#endif
  }
  float load_v(const pacheck_run_args& a, std::int64_t i, int g) const {
    if (fp8 == 0) return load(a.v_pool, i, a.dtype);
    return from_fp8(static_cast<const std::uint8_t*>(a.v_pool)[i], fp8) * v_scale(g);
  }
};

LogitOptions logit_options(const pacheck_run_args& a) {
  LogitOptions o;
  if (PACHECK_HAS_FIELD(&a, pacheck_run_args, soft_cap)) o.soft_cap = a.soft_cap;
  if (PACHECK_HAS_FIELD(&a, pacheck_run_args, window)) o.window = a.window;
  if (PACHECK_HAS_FIELD(&a, pacheck_run_args, alibi_slopes)) o.alibi_slopes = a.alibi_slopes;
  if (PACHECK_HAS_FIELD(&a, pacheck_run_args, sinks)) o.sinks = a.sinks;
  return o;
}

// One query row of query head `head`: the online-softmax state (running max m, denominator d, accumulator acc) starts
// at the head's sink and folds the window's keys a tile at a time. Logits take the options in plugin.h's order: soft
// cap, then ALiBi.
void attend(const pacheck_run_args& a, const LogitOptions& o, const KvCache& kv, int sequence, int position,
            const float* q, int head, int kv_head, float* out) {
  const std::int32_t* table = a.block_tables + sequence * a.block_table_stride;
  // The window: the last `window` positions, ending at the query's own.
  int first = o.window > 0 && position + 1 > o.window ? position + 1 - o.window : 0;
#if defined(PACHECK_TEST_WINDOW_OFF_BY_ONE)
  if (first > 0) --first;  // one key too many: pos - t <= window
#endif
  const int tile = std::max(1, std::min(a.tile_size, position + 1 - first));
  std::vector<float> scores(static_cast<std::size_t>(tile));
  // A sink is a first key with a zero value: the running max starts at it and the denominator at exp(0) = 1.
  float m = o.sinks != nullptr ? o.sinks[head] : -INFINITY;
  float d = m == -INFINITY ? 0.0f : 1.0f;
  float acc[kMaxHeadDim] = {};
  // Where key (or value) t's vector starts in a pool of these strides.
  const auto slot_offset = [&](const std::int64_t* strides, int t) {
    return table[t / a.block_size] * strides[0] + (t % a.block_size) * strides[1] + kv_head * strides[2];
  };
  for (int begin = first; begin <= position; begin += tile) {
    const int count = std::min(tile, position + 1 - begin);
    float tile_max = -INFINITY;
    for (int j = 0; j < count; ++j) {
      const int t = begin + j;
      const std::int64_t k = slot_offset(a.k_strides, t);
      float dot = 0.0f;
      for (int i = 0; i < a.head_dim; ++i) dot += q[i] * kv.load_k(a, k + i * a.k_strides[3], kv_head);
      float s = dot * a.scale;
      if (o.soft_cap > 0) s = o.soft_cap * std::tanh(s / o.soft_cap);
      if (o.alibi_slopes != nullptr) s += o.alibi_slopes[head] * static_cast<float>(t - position);
      scores[j] = s;
      tile_max = std::max(tile_max, s);
    }
    if (tile_max > m) {
      // Re-express d and acc against the larger max (nothing to rescale while m is -inf).
      const float alpha = m == -INFINITY ? 0.0f : std::exp(m - tile_max);
      d *= alpha;
#if !defined(PACHECK_TEST_NO_RESCALE)
      for (int i = 0; i < a.head_dim; ++i) acc[i] *= alpha;
#endif
      m = tile_max;
    }
    for (int j = 0; j < count; ++j) {
      const float p = std::exp(scores[j] - m);
      const std::int64_t v = slot_offset(a.v_strides, begin + j);
      d += p;
      for (int i = 0; i < a.head_dim; ++i) acc[i] += p * kv.load_v(a, v + i * a.v_strides[3], kv_head);
    }
  }
  for (int i = 0; i < a.head_dim; ++i) out[i] = acc[i] / d;
}

// The run entry point: every (sequence, query, head) row, in host memory.
int run(void*, const pacheck_run_args* a, char* message, std::size_t message_size) {
#if defined(PACHECK_TEST_RUN_FAILS)
  std::snprintf(message, message_size, "the kernel refuses head_dim %d: no tuned configuration", a->head_dim);
  return 3;
#elif defined(PACHECK_TEST_RUN_CRASHES)
  std::raise(SIGSEGV);
#endif
  if (a->head_dim > kMaxHeadDim) {  // pacheck never asks (max_head_dim), but a kernel checks what it relies on
    std::snprintf(message, message_size, "head_dim %d exceeds %d", a->head_dim, kMaxHeadDim);
    return 1;
  }
  const int group = a->num_query_heads / a->num_kv_heads;  // query heads per KV head
  const LogitOptions options = logit_options(*a);
  const KvCache kv(*a);
  float q[kMaxHeadDim], out[kMaxHeadDim];
  for (int s = 0; s < a->num_sequences; ++s) {
    for (int j = 0; j < a->query_lens[s]; ++j) {
      const int row = a->query_starts[s] + j;
      const int position = a->context_lens[s] - a->query_lens[s] + j;  // attends to keys ..= position
      for (int h = 0; h < a->num_query_heads; ++h) {
        const std::int64_t at = row * a->query_strides[0] + h * a->query_strides[1];
        for (int i = 0; i < a->head_dim; ++i) q[i] = load(a->queries, at + i * a->query_strides[2], a->dtype);
        attend(*a, options, kv, s, position, q, h, h / group, out);
        const std::int64_t to = row * a->output_strides[0] + h * a->output_strides[1];
        for (int i = 0; i < a->head_dim; ++i) store(a->output, to + i * a->output_strides[2], a->dtype, out[i]);
      }
    }
  }
  return 0;
}

// --- what the plugin declares ---

constexpr std::uint32_t kAllDTypes = PACHECK_DTYPE_F32 | PACHECK_DTYPE_F16 | PACHECK_DTYPE_BF16;
constexpr std::uint32_t kAllModes = PACHECK_MODE_DECODE | PACHECK_MODE_PREFILL | PACHECK_MODE_CONTINUATION;

pacheck_variant streaming() {
  pacheck_variant v{};  // zero: every list empty (any shape), no coefficients
  v.struct_size = sizeof(pacheck_variant);
  v.name = "example_streaming";
  v.description = "example plugin: tiled online softmax through the block table, fp32 (stock error model)";
  v.dtypes = kAllDTypes;
  v.modes = kAllModes;
  v.max_head_dim = kMaxHeadDim;
#if defined(PACHECK_TEST_NONSENSE_CAPABILITIES)
  v.dtypes = 0;        // no dtype
  v.max_head_dim = 0;  // no head dim
#endif
  v.deterministic = 1;
  v.batch_invariant = 1;
  v.uses_splits = 0;
  v.memory = PACHECK_MEMORY_HOST;
  v.error_model = PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX;
  v.run = run;
  // Every logit option and both fp8 formats; the stock model adds their cost.
  v.logit_options = PACHECK_LOGIT_SOFT_CAP | PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_ALIBI | PACHECK_LOGIT_SINKS;
  v.fp8_caches = PACHECK_FP8_E4M3 | PACHECK_FP8_E5M2;
#if defined(PACHECK_TEST_NO_SERVING_FEATURES)
  v.logit_options = 0;  // declares none: pacheck must never give it a problem with options or an fp8 cache
  v.fp8_caches = 0;
#endif
  return v;
}

const std::int32_t kHeadDims[] = {1, 8, 16, 32, 64, 128};
const std::int32_t kBlockSizes[] = {1, 8, 16};
const std::int32_t kGqaRatios[] = {1, 2, 4};

pacheck_variant streaming_coefficients() {
  pacheck_variant v = streaming();
  v.name = "example_streaming_coefficients";
  v.description = "example plugin: the same kernel, explicit error coefficients, a few head dims and block sizes";
  v.num_head_dims = sizeof kHeadDims / sizeof kHeadDims[0];
  v.head_dims = kHeadDims;
  v.num_block_sizes = sizeof kBlockSizes / sizeof kBlockSizes[0];
  v.block_sizes = kBlockSizes;
  v.num_gqa_ratios = sizeof kGqaRatios / sizeof kGqaRatios[0];
  v.gqa_ratios = kGqaRatios;
  // In units of the fp32 unit roundoff u: a logit is a head_dim-term dot product and the scale multiply; a weight is
  // one exp (glibc's expf is within 1 ulp, 2u) times one exp per raise of the running max; a term of P V is rounded by
  // its product, the adds after it and each rescale.
  v.error_model = PACHECK_ERROR_MODEL_COEFFICIENTS;
  v.coefficients.logit_constant = 2;
  v.coefficients.logit_per_head_dim = 1;
  v.coefficients.weight_constant = 2;
  v.coefficients.weight_per_record = 2;
  v.coefficients.chain_constant = 2;
  v.coefficients.chain_per_key = 1;
  v.coefficients.chain_per_record = 1;
  v.coefficients.accumulator_unit_roundoff = 0x1p-24;
  v.coefficients.weight_underflow = 0x1p-150;
  return v;
}

const pacheck_variant kStreaming = streaming();
const pacheck_variant kStreamingCoefficients = streaming_coefficients();
// Unused where PACHECK_TEST_NO_ENTRY leaves out the entry point.
[[maybe_unused]] const pacheck_variant* const kVariants[] = {&kStreaming, &kStreamingCoefficients};

}  // namespace

#if !defined(PACHECK_TEST_NO_ENTRY)
PACHECK_PLUGIN_EXPORT const pacheck_plugin* pacheck_plugin_entry(void) {
  static const pacheck_plugin plugin = {
#if defined(PACHECK_TEST_ABI_VERSION)
      PACHECK_TEST_ABI_VERSION,
#else
      PACHECK_PLUGIN_ABI_VERSION,
#endif
      sizeof(pacheck_plugin), sizeof kVariants / sizeof kVariants[0], kVariants};
  return &plugin;
}
#endif
