/* pacheck's plugin ABI: the plain C interface through which a shared library hands paged-attention kernels to pacheck.
 *
 * A plugin is a shared library (built with -shared -fPIC) that exports one function,
 *
 *     const pacheck_plugin* pacheck_plugin_entry(void);
 *
 * (declare it with PACHECK_PLUGIN_EXPORT, below). `pacheck --plugin PATH` dlopens the library, calls the entry
 * point once, checks the ABI version, validates every declaration, and registers each variant the plugin lists, so
 * that every property, the fuzzer, the reports and replay run it as they run pacheck's own kernels.
 *
 * Versions. PACHECK_PLUGIN_ABI_VERSION changes only when a field of this header changes its meaning, type or place.
 * A pacheck refuses a plugin whose abi_version it does not read ("built against plugin ABI 2, this pacheck reads
 * 1"); rebuilding the plugin against the matching header is the fix. Within one version the ABI grows by appending
 * fields at the end of a struct, never in the middle, and every struct that can grow starts with its struct_size:
 *   - pacheck reads a plugin's struct (pacheck_plugin, pacheck_variant) only up to the struct_size the plugin wrote,
 *     so a newer pacheck reads an older plugin: a field past the plugin's struct_size takes its documented default,
 *     which always means "this feature is absent" (zero);
 *   - an older pacheck reads the fields it knows and ignores the rest, which is safe because an appended field only
 *     ever declares support for a feature (an fp8 cache, soft-capping, a sliding window, ALiBi, attention sinks),
 *     and pacheck only hands a variant problems that use features it knows the variant declares;
 *   - pacheck_run_args goes the other way: pacheck writes it and sets its struct_size; a plugin reads no field past
 *     args->struct_size (treat a field beyond it as zero, the feature off). A feature's field in the run arguments
 *     is only ever set for a variant that declared the feature, so a plugin that does not know the field never sees
 *     it in use.
 *
 * Memory. Everything the plugin returns from the entry point (the pacheck_plugin, the variants, their strings and
 * lists) is owned by the plugin and must stay valid and unchanged while the library is loaded; pacheck copies what
 * it needs at load time and never unloads a plugin. Everything pacheck passes to run (the arguments, the inputs, the
 * output buffer, the message buffer) is owned by pacheck and valid only during that call: the plugin must not free,
 * keep or write through an input pointer, and must not write past the output or the message buffer.
 *
 * Calls. pacheck calls run from one thread at a time, many thousands of times in a run, with problems of every shape
 * the variant's capabilities allow. A run must return (not exit, not throw a C++ exception through this C interface:
 * catch it and return non-zero with its text). A run that crashes the process is reported with the problem it
 * crashed on: `pacheck check` runs plugin variants in a child process that saves each problem before running it.
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

/* Storage dtypes: bit flags in pacheck_variant.dtypes, exactly one of them in pacheck_run_args.dtype. The queries,
 * both KV pools (unless they are an fp8 cache: PACHECK_FP8_*) and the output are stored in the problem's dtype: f32 elements are `float`; f16 and bf16 elements
 * are `uint16_t` bit patterns (IEEE binary16; bfloat16, the high half of a binary32). Every stored input value is
 * exactly representable in the dtype, so reading it loses nothing. The kernel writes its output rounded to the
 * dtype (round to nearest even is what the error models assume). No other bit may be set. */
#define PACHECK_DTYPE_F32 (1u << 0)
#define PACHECK_DTYPE_F16 (1u << 1)
#define PACHECK_DTYPE_BF16 (1u << 2)

/* Modes: bit flags in pacheck_variant.modes. A sequence with context_len keys and query_len new queries (its last
 * query_len positions) is a decode step when query_len == 1, a causal prefill when query_len == context_len, and a
 * continuation in between. A problem's sequences may mix modes; pacheck only generates problems whose every
 * sequence is in a declared mode. No other bit may be set. */
#define PACHECK_MODE_DECODE (1u << 0)
#define PACHECK_MODE_PREFILL (1u << 1)
#define PACHECK_MODE_CONTINUATION (1u << 2)

/* Logit options: bit flags in pacheck_variant.logit_options, the options of a problem the kernel computes (their
 * values arrive in pacheck_run_args, which says what each means). pacheck never gives a variant a problem that sets
 * an option it did not declare. No other bit may be set. */
#define PACHECK_LOGIT_SOFT_CAP (1u << 0)
#define PACHECK_LOGIT_WINDOW (1u << 1)
#define PACHECK_LOGIT_ALIBI (1u << 2)
#define PACHECK_LOGIT_SINKS (1u << 3)

/* fp8 KV caches: bit flags in pacheck_variant.fp8_caches, the cache formats the kernel reads; pacheck_run_args.fp8_cache
 * holds exactly one of them, or 0 when the pools are in the run's dtype. The formats are OCP FP8 as PyTorch's
 * float8_e4m3fn and float8_e5m2 (vLLM's kv_cache_dtype fp8_e4m3 and fp8_e5m2): e4m3 has a bias of 7, no
 * infinities, and NaN only as S.1111.111; e5m2 has a bias of 15 and IEEE infinities and NaNs. pacheck never gives a
 * variant a problem whose cache format it did not declare. No other bit may be set. */
#define PACHECK_FP8_E4M3 (1u << 0)
#define PACHECK_FP8_E5M2 (1u << 1)

/* Whether a struct that starts with its struct_size holds `field` whole: a plugin reads a field of pacheck_run_args
 * appended after ABI 1's first release only when PACHECK_HAS_FIELD(args, pacheck_run_args, field), else takes it
 * as zero. */
#define PACHECK_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Where the run's arrays live: pacheck_variant.memory, echoed in pacheck_run_args.memory. */
#define PACHECK_MEMORY_HOST 1u   /* ordinary host memory */
#define PACHECK_MEMORY_DEVICE 2u /* CUDA device memory (cudaMalloc) on the current device; only pacheck builds with
                                    CUDA load such a variant */

/* Error models (oracle/ERROR_MODEL.md derives each): pacheck_variant.error_model. The bound every output element is
 * held to follows from what the kernel's arithmetic is; pick the stock model that describes it, or give
 * coefficients. */
#define PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX 1u /* fp32 logits and sums, an exp within 2 ulp, one online softmax
                                                      over the row's keys in tiles of any size, partial sums added
                                                      in any order */
#define PACHECK_ERROR_MODEL_FP32_SPLIT_K 2u        /* the same per split of the effective split size (see
                                                      pacheck_run_args.split_size), splits merged in order; declare
                                                      uses_splits */
#define PACHECK_ERROR_MODEL_BF16_TENSOR_CORES 3u   /* bf16 mma with fp32 accumulators over tiles of min(tile_size,
                                                      64) keys, weights split into bf16 hi + lo, four warps' sums
                                                      added at the end; split-K when uses_splits */
#define PACHECK_ERROR_MODEL_COEFFICIENTS 4u        /* pacheck_variant.coefficients */
#define PACHECK_ERROR_MODEL_FP16_TENSOR_CORES 5u   /* appended within ABI 1: as _BF16_TENSOR_CORES with fp16 operands,
                                                      weights split into fp16 hi + lo */

/* Explicit error-model coefficients, read when error_model is PACHECK_ERROR_MODEL_COEFFICIENTS. Each term is a
 * constant plus multiples of a row's quantities: head_dim, the keys the row attends to, its running-max records
 * (split-K: the records of one split), its splits (1 unless split-K) and its tiles of tile_size keys. All must be
 * finite and non-negative; accumulator_unit_roundoff lies in (0, 1) and weight_underflow in [0, 1). A starting point,
 * an fp32 online softmax whose exp is within 2 ulp: logit 2 + 1 per head_dim, weight 4 + 4 per record, chain 3 + 1
 * per key + 1 per record, unit roundoff 2^-24, underflow 2^-150 (the ErrorCoefficients defaults of pacheck's
 * oracle/stock_error_models.h). */
typedef struct pacheck_error_coefficients {
  double logit_constant, logit_per_head_dim; /* a logit's error, in units of u times |logit| */
  double weight_constant, weight_per_record, weight_per_split; /* a softmax weight's relative error, in units of u */
  double chain_constant, chain_per_key, chain_per_record, chain_per_split, chain_per_tile; /* roundings of P V */
  double accumulator_unit_roundoff; /* u of the accumulation: 2^-24 for fp32 */
  double weight_underflow;          /* absolute error a weight may lose to underflow */
} pacheck_error_coefficients;

/* The arguments of one run. Shapes are in elements; strides are in elements (not bytes) of the dtype (of one byte
 * for an fp8 cache's pools), int64, and index the arrays as written: element [i][h][d] of the queries is at
 * queries + i * query_strides[0] + h * query_strides[1] + d * query_strides[2]. A kernel must honour the strides
 * (pacheck passes contiguous arrays today and may pass others). Every pointer is in the memory the variant declared (host or CUDA device). */
typedef struct pacheck_run_args {
  uint32_t struct_size; /* sizeof(pacheck_run_args) as pacheck was built: read no field past it */
  uint32_t dtype;       /* one PACHECK_DTYPE_*: the storage of queries, output and (without fp8_cache) the pools */
  uint32_t memory;      /* PACHECK_MEMORY_HOST or PACHECK_MEMORY_DEVICE, as the variant declared */

  int32_t num_sequences;
  int32_t total_queries;   /* the sum of query_lens */
  int32_t num_query_heads;
  int32_t num_kv_heads;    /* divides num_query_heads: query head h reads KV head h / (num_query_heads /
                              num_kv_heads) */
  int32_t head_dim;        /* 1 .. the variant's max_head_dim (and in its head_dims list, when it gave one) */
  int32_t num_blocks;      /* physical blocks in each KV pool */
  int32_t block_size;      /* token slots per block */
  int32_t block_table_width; /* entries per row of block_tables, >= every sequence's ceil(context_len / block_size) */
  int32_t max_context_len;   /* the largest context_lens entry, for planning without reading device memory */
  float scale;               /* the softmax scale: logits are (q . k) * scale */

  /* Knobs: tile_size keys per online-softmax step (>= 1). Split-K kernels split each sequence's keys into splits of
   * the effective split size: ceil(context_len / num_splits) when num_splits > 0, else split_size (>= 1). A correct
   * kernel's output may change with them only within its error bound. */
  int32_t tile_size;
  int32_t split_size;
  int32_t num_splits;

  /* [total_queries][num_query_heads][head_dim]: the queries of sequence s are rows query_starts[s] ..
   * query_starts[s + 1] - 1, in order; query j of sequence s sits at position context_len - query_len + j and attends
   * causally to keys 0 ..= that position. */
  const void* queries;
  int64_t query_strides[3];
  /* [num_blocks][block_size][num_kv_heads][head_dim]: the key (and value) at logical position t of sequence s lives in
   * block block_tables[s][t / block_size], slot t % block_size. Slots and blocks a sequence does not reference may
   * hold anything, NaN and infinities included: a kernel must give them weight exactly 0 (never read them, or mask
   * them before they can reach a sum). */
  const void* k_pool;
  int64_t k_strides[4];
  const void* v_pool;
  int64_t v_strides[4];
  /* [num_sequences][block_table_width] block ids; row s starts at block_tables + s * block_table_stride. Entries past
   * the ones a sequence's context needs are padding and may hold any value, invalid ids included: never read them. */
  const int32_t* block_tables;
  int64_t block_table_stride;
  const int32_t* context_lens; /* [num_sequences], each >= 1 */
  const int32_t* query_lens;   /* [num_sequences], each in 1 .. context_lens[s] */
  const int32_t* query_starts; /* [num_sequences + 1]: prefix sums of query_lens, query_starts[0] = 0 */

  /* [total_queries][num_query_heads][head_dim] in the dtype: the kernel writes every element. pacheck fills it with
   * NaN before the call, so an element left unwritten fails. */
  void* output;
  int64_t output_strides[3];

  /* Appended within ABI 1 (read them only when PACHECK_HAS_FIELD says they are there): the logit options of
   * pacheck's problem/problem.h, applied in this order for query head h at position pos and key t <= pos:
   *   s_t = scale * (q . k_t)
   *   s_t = soft_cap * tanh(s_t / soft_cap)      when soft_cap > 0 (Gemma 2's soft-capping)
   *   s_t = s_t + alibi_slopes[h] * (t - pos)    when alibi_slopes is not null (ALiBi: older keys lose)
   *   key t is visible only if pos - t < window  when window > 0 (a sliding window: the last `window` positions)
   *   the softmax runs over the visible keys and one more logit, sinks[h], whose value is the zero vector (an
   *   attention sink), when sinks is not null; a sink of -inf is no sink for that head.
   * Each is absent (0 or a null pointer) unless the problem sets it, and the problem sets it only for a variant
   * that declared it (pacheck_variant.logit_options). The arrays are in the variant's declared memory. */
  float soft_cap;            /* finite and > 0; 0: no soft cap */
  int32_t window;            /* >= 1 (FlashInfer's window_left is window - 1); 0: no window */
  const float* alibi_slopes; /* [num_query_heads], each finite; null: no ALiBi */
  const float* sinks;        /* [num_query_heads], each finite or -inf; null: no sinks */

  /* Appended within ABI 1 (read them only when PACHECK_HAS_FIELD says they are there): an fp8 KV cache, set only
   * for a variant that declared its format (pacheck_variant.fp8_caches). With fp8_cache set, k_pool and v_pool hold
   * one byte per element, the format's bit patterns (their strides count bytes), and the exact key and value of KV
   * head g are
   *   k = fp8 value of k_pool[...] * k_scales[num_k_scales == 1 ? 0 : g]
   *   v = fp8 value of v_pool[...] * v_scales[num_v_scales == 1 ? 0 : g]
   * (a scale per tensor or per KV head); the queries and the output stay in the dtype. The scale arrays are in the
   * variant's declared memory. Without an fp8 cache all four are 0 or null and the pools hold the dtype. */
  uint32_t fp8_cache;      /* 0, or one PACHECK_FP8_* */
  int32_t num_k_scales;    /* 1 (per tensor) or num_kv_heads (per head); 0 without an fp8 cache */
  const float* k_scales;   /* [num_k_scales], each finite and > 0 */
  int32_t num_v_scales;    /* likewise for V */
  const float* v_scales;   /* [num_v_scales], each finite and > 0 */
} pacheck_run_args;

/* Runs the kernel on one problem. `context` is the variant's own context pointer. Returns 0 on success; otherwise
 * non-zero, with a NUL-terminated message of at most message_size bytes (the terminator included) written into
 * `message` (pacheck owns it; message_size is at least 256). The message surfaces in the failing property's
 * report. A device variant may launch on any stream but must have finished all its work when it returns. */
typedef int (*pacheck_run_fn)(void* context, const pacheck_run_args* args, char* message, size_t message_size);

/* One variant: a kernel with what it can run, how exact it is, and how to run it. Lists (head_dims, block_sizes,
 * gqa_ratios) are optional: a count of 0 (and a null pointer) means "any". */
typedef struct pacheck_variant {
  uint32_t struct_size;    /* sizeof(pacheck_variant) as the plugin was built */
  const char* name;        /* letters, digits, '_', '-', '.'; at most 64 characters; unique among every variant
                              pacheck knows (its own and every loaded plugin's) */
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
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): with PACHECK_ERROR_MODEL_COEFFICIENTS, an
   * absolute error every output element may carry whatever its magnitude, e.g. 2^-25 for partial outputs stored in
   * fp16 (oracle/ERROR_MODEL.md, "Declaring a model for an external kernel"); finite and non-negative. */
  double absolute_error;
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): PACHECK_LOGIT_* flags, the logit options the
   * kernel computes as pacheck_run_args defines them; 0, none. The error model covers them: a stock model adds
   * the fp32 cost of each option to its logit term and a sink's one more term to its sums, and so do explicit
   * coefficients (which describe the plain logit: oracle/ERROR_MODEL.md, "Logit options"). */
  uint32_t logit_options;
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): PACHECK_FP8_* flags, the fp8 KV cache formats
   * the kernel reads as pacheck_run_args defines them; 0, none. The error model covers the dequantisation: every
   * model adds one fp32 rounding to each term of the logit (K times its scale) and one to each term of P V (V times
   * its scale), as oracle/ERROR_MODEL.md, "fp8 caches", derives; a kernel that folds a scale elsewhere rounds no
   * more than that in relative terms (one that rounds its output before the V scale sets
   * absolute_error_per_v_scale). */
  uint32_t fp8_caches;
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): with an fp8 cache, the PACHECK_DTYPE_* flags of
   * the query dtypes the kernel takes it with (0: every one of dtypes), and a number every head dim is then a
   * multiple of (0 or 1: any head dim it takes; at most 256). A problem outside them is never given to it. */
  uint32_t fp8_query_dtypes;
  uint32_t fp8_head_dim_multiple;
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): with PACHECK_ERROR_MODEL_COEFFICIENTS and an fp8
   * cache, an absolute error in units of the row's V scale, for a kernel that rounds its output in a narrower format
   * before it multiplies by the V scale (2^-25 for an fp16 output: oracle/ERROR_MODEL.md, "Declaring a model for an
   * external kernel"); finite and non-negative. */
  double absolute_error_per_v_scale;
  /* Appended within ABI 1 (absent, 0, in a plugin built before it): with PACHECK_ERROR_MODEL_COEFFICIENTS and a soft
   * cap, the u per logit magnitude that the kernel's cap costs beyond fp32's, counted only for a problem with a soft
   * cap (2^13.013 for tanh.approx.f32: oracle/ERROR_MODEL.md, "Logit options"); finite and non-negative. */
  double soft_cap_logit_constant;
} pacheck_variant;

/* What the entry point returns. */
typedef struct pacheck_plugin {
  uint32_t abi_version;  /* PACHECK_PLUGIN_ABI_VERSION as the plugin was built; always the first field */
  uint32_t struct_size;  /* sizeof(pacheck_plugin) as the plugin was built */
  uint32_t num_variants; /* at least 1 */
  /* num_variants pointers (an array of pointers, so that a pacheck_variant can grow without moving its
   * neighbours) */
  const pacheck_variant* const* variants;
} pacheck_plugin;

/* The entry point every plugin defines (PACHECK_PLUGIN_EXPORT const pacheck_plugin* pacheck_plugin_entry(void)
 * { ... }). It is called once per load and returns a pointer to static data, never null. */
typedef const pacheck_plugin* (*pacheck_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PACHECK_PLUGIN_H */
