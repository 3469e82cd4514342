/* pacheck's plugin ABI: the plain C interface through which a shared library hands paged-attention kernels to pacheck.
 *
 * A plugin is a shared library (-shared -fPIC) that defines, with PACHECK_PLUGIN_EXPORT,
 *     const pacheck_plugin* pacheck_plugin_entry(void);
 * `pacheck --plugin PATH` dlopens it, calls the entry point once, checks abi_version, validates every declaration
 * and registers each variant for every property, the fuzzer, the reports and replay.
 *
 * Versions. PACHECK_PLUGIN_ABI_VERSION changes only when a field changes its meaning, type or place; pacheck refuses
 * another version (rebuild against its header). Within a version a struct grows only at its end, and each struct that
 * can grow starts with struct_size. pacheck reads a plugin's structs only up to their struct_size: a field past it is
 * zero, which always means "feature absent". An older pacheck safely ignores fields it does not know: an appended
 * field only declares a feature, and a variant only gets problems whose features pacheck knows it declares.
 * Conversely a plugin reads no pacheck_run_args field past args->struct_size (PACHECK_HAS_FIELD; such a field is zero,
 * the feature off), and a feature's run field is set only for a variant that declared the feature.
 *
 * Memory. What the entry point returns (plugin, variants, their strings and lists) is the plugin's and must stay
 * valid and unchanged while the library is loaded (pacheck copies what it needs and never unloads a plugin). What
 * pacheck passes to run is pacheck's and valid only during the call: never free, keep or write through an input
 * pointer, nor write past the output or the message buffer.
 *
 * Calls. run is called from one thread at a time, many thousands of times, on every shape the variant's capabilities
 * allow. It must return: not exit, nor let a C++ exception cross this C interface (catch it, return non-zero with its
 * text). `pacheck check` runs plugin variants in a child process that saves each problem first, so a crash is
 * reported with its problem.
 */
#ifndef PACHECK_PLUGIN_H
#define PACHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; a plugin writes it into pacheck_plugin.abi_version. */
#define PACHECK_PLUGIN_ABI_VERSION 1u

/* The entry point's symbol, which pacheck looks up with dlsym. */
#define PACHECK_PLUGIN_ENTRY_SYMBOL "pacheck_plugin_entry"

/* Put before the definition of pacheck_plugin_entry: C linkage, exported even under -fvisibility=hidden. */
#ifdef __cplusplus
#define PACHECK_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define PACHECK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* In every set of bit flags below, no other bit may be set. */

/* Storage dtypes: flags in pacheck_variant.dtypes; pacheck_run_args.dtype holds exactly one. The queries, the output
 * and both KV pools (unless an fp8 cache: PACHECK_FP8_*) are in the problem's dtype: f32 elements are `float`, f16
 * and bf16 elements `uint16_t` bit patterns (IEEE binary16; bfloat16, the high half of a binary32). Every input value
 * is exact in the dtype. Round the output to the dtype (the error models assume round to nearest even). */
#define PACHECK_DTYPE_F32 (1u << 0)
#define PACHECK_DTYPE_F16 (1u << 1)
#define PACHECK_DTYPE_BF16 (1u << 2)

/* Modes: flags in pacheck_variant.modes. A sequence of context_len keys whose last query_len positions are queries
 * is a decode step when query_len == 1, a causal prefill when query_len == context_len, a continuation in between.
 * A problem may mix modes; each of its sequences is in a declared mode. */
#define PACHECK_MODE_DECODE (1u << 0)
#define PACHECK_MODE_PREFILL (1u << 1)
#define PACHECK_MODE_CONTINUATION (1u << 2)

/* Logit options: flags in pacheck_variant.logit_options, the options the kernel computes (pacheck_run_args defines
 * them); a variant never gets an option it did not declare. */
#define PACHECK_LOGIT_SOFT_CAP (1u << 0)
#define PACHECK_LOGIT_WINDOW (1u << 1)
#define PACHECK_LOGIT_ALIBI (1u << 2)
#define PACHECK_LOGIT_SINKS (1u << 3)

/* fp8 KV caches: flags in pacheck_variant.fp8_caches, the formats the kernel reads; pacheck_run_args.fp8_cache holds
 * one of them, or 0 when the pools are in the dtype. OCP FP8 as PyTorch's float8_e4m3fn and float8_e5m2 (vLLM's
 * kv_cache_dtype fp8_e4m3, fp8_e5m2): e4m3 has bias 7, no infinities, NaN only as S.1111.111; e5m2 has bias 15 and
 * IEEE infinities and NaNs. A variant never gets a format it did not declare. */
#define PACHECK_FP8_E4M3 (1u << 0)
#define PACHECK_FP8_E5M2 (1u << 1)

/* Whether a struct that starts with its struct_size holds `field` whole. Read a pacheck_run_args field appended
 * within ABI 1 only when PACHECK_HAS_FIELD(args, pacheck_run_args, field); otherwise take it as zero. */
#define PACHECK_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Where the run's arrays live: pacheck_variant.memory, echoed in pacheck_run_args.memory. */
#define PACHECK_MEMORY_HOST 1u   /* ordinary host memory */
#define PACHECK_MEMORY_DEVICE 2u /* CUDA device memory (cudaMalloc) on the current device; needs a CUDA pacheck */

/* Error models (oracle/ERROR_MODEL.md derives each), pacheck_variant.error_model: the bound on each output element.
 * Pick the stock model that describes the kernel's arithmetic, or give coefficients:
 *   FP32_ONLINE_SOFTMAX: fp32 logits and sums, an exp within 2 ulp, one online softmax over the row's keys in tiles
 *     of any size, partial sums added in any order;
 *   FP32_SPLIT_K: the same per split of the effective split size (pacheck_run_args.split_size), splits merged in
 *     order; declare uses_splits;
 *   BF16_TENSOR_CORES: bf16 mma with fp32 accumulators over tiles of min(tile_size, 64) keys, weights split into
 *     bf16 hi + lo, four warps' sums added at the end; split-K when uses_splits;
 *   FP16_TENSOR_CORES (appended within ABI 1): the same with fp16 operands and fp16 hi + lo weights;
 *   COEFFICIENTS: pacheck_variant.coefficients. */
#define PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX 1u
#define PACHECK_ERROR_MODEL_FP32_SPLIT_K 2u
#define PACHECK_ERROR_MODEL_BF16_TENSOR_CORES 3u
#define PACHECK_ERROR_MODEL_COEFFICIENTS 4u
#define PACHECK_ERROR_MODEL_FP16_TENSOR_CORES 5u

/* Error-model coefficients, read when error_model is PACHECK_ERROR_MODEL_COEFFICIENTS. Each term is a constant plus
 * multiples of a row's head_dim, keys attended to, running-max records (split-K: of one split), splits (1 unless
 * split-K) and tiles of tile_size keys. All finite and non-negative; accumulator_unit_roundoff in (0, 1),
 * weight_underflow in [0, 1). An fp32 online softmax with an exp within 2 ulp is: logit 2 + 1 per head_dim, weight
 * 4 + 4 per record, chain 3 + 1 per key + 1 per record, unit roundoff 2^-24, underflow 2^-150 (the ErrorCoefficients
 * defaults of oracle/stock_error_models.h). */
typedef struct pacheck_error_coefficients {
  double logit_constant, logit_per_head_dim; /* a logit's error, in units of u times |logit| */
  double weight_constant, weight_per_record, weight_per_split; /* a softmax weight's relative error, in units of u */
  double chain_constant, chain_per_key, chain_per_record, chain_per_split, chain_per_tile; /* roundings of P V */
  double accumulator_unit_roundoff; /* u of the accumulation: 2^-24 for fp32 */
  double weight_underflow;          /* absolute error a weight may lose to underflow */
} pacheck_error_coefficients;

/* The arguments of one run. Shapes count elements; strides are int64 and count elements of the dtype (bytes for an
 * fp8 cache's pools): queries[i][h][d] is at queries + i * query_strides[0] + h * query_strides[1] +
 * d * query_strides[2]. Honour the strides (contiguous today; others may come). Every pointer is in the memory the
 * variant declared. */
typedef struct pacheck_run_args {
  uint32_t struct_size; /* sizeof(pacheck_run_args) as pacheck was built: read no field past it */
  uint32_t dtype;       /* one PACHECK_DTYPE_*: the storage of queries, output and (without fp8_cache) the pools */
  uint32_t memory;      /* PACHECK_MEMORY_HOST or PACHECK_MEMORY_DEVICE, as the variant declared */

  int32_t num_sequences;
  int32_t total_queries;   /* the sum of query_lens */
  int32_t num_query_heads;
  int32_t num_kv_heads;    /* divides num_query_heads; query head h reads KV head h / (num_query_heads / this) */
  int32_t head_dim;        /* 1 .. the variant's max_head_dim (and in its head_dims list, when it gave one) */
  int32_t num_blocks;      /* physical blocks in each KV pool */
  int32_t block_size;      /* token slots per block */
  int32_t block_table_width; /* entries per row of block_tables, >= every sequence's ceil(context_len / block_size) */
  int32_t max_context_len;   /* the largest context_lens entry, for planning without reading device memory */
  float scale;               /* the softmax scale: logits are (q . k) * scale */

  /* Knobs: tile_size keys per online-softmax step (>= 1). A split-K kernel splits each sequence's keys into splits
   * of the effective split size: ceil(context_len / num_splits) when num_splits > 0, else split_size (>= 1). The
   * knobs may change a correct kernel's output only within its error bound. */
  int32_t tile_size;
  int32_t split_size;
  int32_t num_splits;

  /* [total_queries][num_query_heads][head_dim]: sequence s's queries are rows query_starts[s] .. query_starts[s + 1]
   * - 1; its query j sits at position context_len - query_len + j and attends causally to keys 0 ..= that position. */
  const void* queries;
  int64_t query_strides[3];
  /* [num_blocks][block_size][num_kv_heads][head_dim]: sequence s's key (and value) at logical position t is in block
   * block_tables[s][t / block_size], slot t % block_size. Slots and blocks a sequence does not reference may hold
   * anything, NaN and infinities included: give them weight exactly 0 (never read, or mask before any sum). */
  const void* k_pool;
  int64_t k_strides[4];
  const void* v_pool;
  int64_t v_strides[4];
  /* [num_sequences][block_table_width] block ids; row s starts at block_tables + s * block_table_stride. Entries past
   * those a sequence's context needs are padding, possibly invalid ids: never read them. */
  const int32_t* block_tables;
  int64_t block_table_stride;
  const int32_t* context_lens; /* [num_sequences], each >= 1 */
  const int32_t* query_lens;   /* [num_sequences], each in 1 .. context_lens[s] */
  const int32_t* query_starts; /* [num_sequences + 1]: prefix sums of query_lens, query_starts[0] = 0 */

  /* [total_queries][num_query_heads][head_dim] in the dtype; write every element (it arrives NaN-filled, so an
   * unwritten one fails). */
  void* output;
  int64_t output_strides[3];

  /* Appended within ABI 1 (PACHECK_HAS_FIELD): the logit options of problem/problem.h, applied in this order for
   * query head h at position pos and key t <= pos:
   *   s_t = scale * (q . k_t)
   *   s_t = soft_cap * tanh(s_t / soft_cap)      when soft_cap > 0 (Gemma 2's soft-capping)
   *   s_t = s_t + alibi_slopes[h] * (t - pos)    when alibi_slopes is not null (ALiBi: older keys lose)
   *   key t is visible only if pos - t < window  when window > 0 (a sliding window: the last `window` positions)
   *   the softmax runs over the visible keys and one more logit, sinks[h], whose value is the zero vector (an
   *   attention sink), when sinks is not null; a sink of -inf is no sink for that head.
   * Each is absent (0 or null) unless the problem sets it, only ever for a variant that declared it
   * (pacheck_variant.logit_options). The arrays are in the variant's declared memory. */
  float soft_cap;            /* finite and > 0; 0: no soft cap */
  int32_t window;            /* >= 1 (FlashInfer's window_left is window - 1); 0: no window */
  const float* alibi_slopes; /* [num_query_heads], each finite; null: no ALiBi */
  const float* sinks;        /* [num_query_heads], each finite or -inf; null: no sinks */

  /* Appended within ABI 1 (PACHECK_HAS_FIELD): an fp8 KV cache, set only for a variant that declared its format
   * (pacheck_variant.fp8_caches). Then k_pool and v_pool hold the format's one-byte patterns (strides count bytes),
   * and KV head g's exact key and value are
   *   k = fp8 value of k_pool[...] * k_scales[num_k_scales == 1 ? 0 : g]
   *   v = fp8 value of v_pool[...] * v_scales[num_v_scales == 1 ? 0 : g]
   * (a scale per tensor or per KV head); queries and output stay in the dtype; the scale arrays are in the variant's
   * declared memory. Without an fp8 cache all five are 0 or null and the pools hold the dtype. */
  uint32_t fp8_cache;      /* 0, or one PACHECK_FP8_* */
  int32_t num_k_scales;    /* 1 (per tensor) or num_kv_heads (per head); 0 without an fp8 cache */
  const float* k_scales;   /* [num_k_scales], each finite and > 0 */
  int32_t num_v_scales;    /* likewise for V */
  const float* v_scales;   /* [num_v_scales], each finite and > 0 */
} pacheck_run_args;

/* Runs the kernel on one problem; `context` is the variant's context pointer. Returns 0 on success; otherwise
 * non-zero, having written into `message` (pacheck's; message_size >= 256) a NUL-terminated text of at most
 * message_size bytes, terminator included, which the failing property's report shows. A device variant may launch
 * on any stream but must have finished all its work when it returns. */
typedef int (*pacheck_run_fn)(void* context, const pacheck_run_args* args, char* message, size_t message_size);

/* One variant: a kernel, what it can run, how exact it is, and how to run it. The lists (head_dims, block_sizes,
 * gqa_ratios) are optional: a count of 0 (and a null pointer) means "any". A field appended within ABI 1 reads as 0
 * (absent) from a plugin built before it. */
typedef struct pacheck_variant {
  uint32_t struct_size;    /* sizeof(pacheck_variant) as the plugin was built */
  const char* name;        /* letters, digits, '_', '-', '.'; at most 64; unique among pacheck's and plugins' */
  const char* description; /* one line: what the kernel is */

  uint32_t dtypes;         /* PACHECK_DTYPE_* flags, at least one */
  uint32_t modes;          /* PACHECK_MODE_* flags, at least one */
  int32_t max_head_dim;    /* 1 .. 256 */
  int32_t num_head_dims;   /* when > 0, head_dims lists the only head dims the kernel takes, each 1 .. max_head_dim */
  const int32_t* head_dims;
  int32_t num_block_sizes; /* when > 0, the only block sizes it takes, each >= 1 */
  const int32_t* block_sizes;
  int32_t num_gqa_ratios;  /* when > 0, the only GQA ratios (num_query_heads / num_kv_heads) it takes, each >= 1 */
  const int32_t* gqa_ratios;
  uint32_t deterministic;   /* 1: the same problem always gives bit-identical output; else 0 */
  uint32_t batch_invariant; /* 1: a sequence's output does not depend on the other sequences of its batch; else 0 */
  uint32_t uses_splits;     /* 1: split_size / num_splits change the arithmetic (split-K); else 0 */
  uint32_t memory;          /* PACHECK_MEMORY_HOST or PACHECK_MEMORY_DEVICE */

  uint32_t error_model;     /* one PACHECK_ERROR_MODEL_* */
  pacheck_error_coefficients coefficients; /* read only for PACHECK_ERROR_MODEL_COEFFICIENTS */

  pacheck_run_fn run;       /* required */
  void* context;            /* passed to run as is; may be null */
  /* Appended within ABI 1: with PACHECK_ERROR_MODEL_COEFFICIENTS, an absolute error any output element may carry
   * whatever its magnitude, e.g. 2^-25 for partial outputs stored in fp16 (oracle/ERROR_MODEL.md, "Declaring a model
   * for an external kernel"); finite and non-negative. */
  double absolute_error;
  /* Appended within ABI 1: PACHECK_LOGIT_* flags, the logit options the kernel computes; 0, none. The error model
   * covers them: a stock model adds each option's fp32 cost to its logit term and a sink's one more term to its sums,
   * and so do explicit coefficients (which describe the plain logit: oracle/ERROR_MODEL.md, "Logit options"). */
  uint32_t logit_options;
  /* Appended within ABI 1: PACHECK_FP8_* flags, the fp8 cache formats the kernel reads; 0, none. Every error model
   * covers the dequantisation: one fp32 rounding more on each term of the logit (K times its scale) and of P V (V
   * times its scale; oracle/ERROR_MODEL.md, "fp8 caches"). Folding a scale elsewhere rounds no more in relative
   * terms; a kernel that rounds its output before the V scale sets absolute_error_per_v_scale. */
  uint32_t fp8_caches;
  /* Appended within ABI 1: with an fp8 cache, the PACHECK_DTYPE_* flags of the query dtypes the kernel takes it with
   * (0: all of dtypes), and a number every head dim is then a multiple of (0 or 1: any; at most 256). It never gets
   * a problem outside them. */
  uint32_t fp8_query_dtypes;
  uint32_t fp8_head_dim_multiple;
  /* Appended within ABI 1: with PACHECK_ERROR_MODEL_COEFFICIENTS and an fp8 cache, an absolute error in units of the
   * row's V scale, for a kernel that rounds its output to a narrower format before multiplying by the V scale
   * (2^-25 for fp16: oracle/ERROR_MODEL.md, "Declaring a model for an external kernel"); finite and non-negative. */
  double absolute_error_per_v_scale;
  /* Appended within ABI 1: with PACHECK_ERROR_MODEL_COEFFICIENTS, the u per logit magnitude the kernel's soft cap
   * costs beyond fp32's, counted only for a problem with a soft cap (2^13.013 for tanh.approx.f32:
   * oracle/ERROR_MODEL.md, "Logit options"); finite and non-negative. */
  double soft_cap_logit_constant;
} pacheck_variant;

/* What the entry point returns. */
typedef struct pacheck_plugin {
  uint32_t abi_version;  /* PACHECK_PLUGIN_ABI_VERSION as the plugin was built; always the first field */
  uint32_t struct_size;  /* sizeof(pacheck_plugin) as the plugin was built */
  uint32_t num_variants; /* at least 1 */
  const pacheck_variant* const* variants; /* num_variants pointers (so a pacheck_variant can grow in place) */
} pacheck_plugin;

/* The entry point's type: called once per load, it returns a pointer to static data, never null. */
typedef const pacheck_plugin* (*pacheck_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PACHECK_PLUGIN_H */
