// The decode benchmark of the CUDA kernels. Not a test: bench/run_gpu_suite.sh runs it on a GPU.
//
// It measures the device-to-device copy bandwidth (read + written), then cuda_fused's and cuda_splitk's on decode:
// bf16 (--dtype fp16: fp16) queries, K/V and output, head dim 128, block size 16, 8 KV heads, GQA 4 and 8, batch
// 1/8/64/256, context 1k/8k/32k, every sequence's blocks scattered through one pool. Bandwidth: (K + V read + Q +
// output) / the median CUDA-event time over repeats, the L2 flushed before each. It prints a table and writes JSON;
// bench/torch_sdpa_bench.py and bench/flashinfer_bench.py time others on the same shapes.
//
// --layout, --merge: pin the kernel choices (problem/knobs.h; else launch_rules.h's). --only GQA,BATCH,CONTEXT: one
// shape, on the grid or off it. --split N: N keys per split, not the split filling the GPU in one wave.
// Diagnostics: --sequential-pool (blocks in pool order), --stages (also split-K's attention kernel without its
// merge: splitk_no_merge), --clean-flush (a read of a second buffer after the flush leaves clean L2 lines, not dirty
// ones written back during the kernel), --warm-metadata (the plan, sequence records, block tables, query rows'
// sequences and queries read back into the L2 after each flush, as a serving engine's upload leaves them).
// Logit options, for their cost: --soft-cap CAP, --window W (the last W keys per query; bytes and the split count
// only the keys read), --alibi (geometric slopes), --sinks (logit 0 per query head).
// --kv-cache fp8_e4m3|fp8_e5m2: K and V as an fp8 cache, scales per KV head; bytes count a byte per K or V element.
//
//   paged_attention_bench [--json FILE] [--repeats N] [--tile-size N] [--layout L] [--merge M] [--only G,B,C]
//                         [--split N] [--sequential-pool] [--stages] [--clean-flush] [--warm-metadata]
//                         [--soft-cap CAP] [--window W] [--alibi] [--sinks] [--dtype bf16|fp16]
//                         [--kv-cache fp8_e4m3|fp8_e5m2]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_problem.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/plan_on_device.h"
#include "problem/dtype.h"
#include "problem/knobs.h"

namespace pacheck::cuda {
namespace {

constexpr int kHeadDim = 128;
constexpr int kBlockSize = 16;
constexpr int kKvHeads = 8;
constexpr int kGqaRatios[] = {4, 8};
constexpr int kBatches[] = {1, 8, 64, 256};
constexpr int kContexts[] = {1024, 8192, 32768};

struct Options {
  std::string json_path = "paged_attention_bench.json";
  int repeats = 20;
  int tile_size = 64;  // at least the kernels' largest tile for this shape (the kernel caps it)
  KernelPins pins;  // --layout, --merge (automatic: launch_rules.h's rules)
  int only_gqa = 0, only_batch = 0, only_context = 0;
  int split = 0;  // cuda_splitk's keys per split; 0: split_size_filling_gpu
  bool sequential_pool = false, stages = false, clean_flush = false, warm_metadata = false;  // the diagnostics
  float soft_cap = 0.0f;  // the logit options every launch computes (DeviceBatch's: 0 and false are none)
  int window = 0;
  bool alibi = false, sinks = false;
  Storage storage = Storage::bf16;  // --dtype: the queries', K/V's and output's 16-bit type
  std::optional<Fp8Format> fp8;  // --kv-cache: K and V as an fp8 cache in this format (with bf16 queries)
};

__device__ inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform values in [-1, 1), rounded to bf16 or fp16 (their bits).
__global__ void fill_16bit(std::uint16_t* data, std::size_t count, std::uint64_t seed, bool fp16) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float x = 2.0f * (static_cast<float>(splitmix(i ^ (seed << 40)) >> 40) * 0x1p-24f) - 1.0f;
    data[i] = fp16 ? __half_as_ushort(__float2half_rn(x)) : __bfloat16_as_ushort(__float2bfloat16_rn(x));
  }
}

void fill(std::uint16_t* data, std::size_t count, std::uint64_t seed, Storage storage) {
  fill_16bit<<<4096, 256>>>(data, count, seed, storage == Storage::f16);
  check_launch("fill_16bit");
}

// Uniform values in [-4, 4), rounded to e4m3 or e5m2 (their bytes): an fp8 cache's values span its range's middle.
__global__ void fill_fp8(unsigned char* data, std::size_t count, std::uint64_t seed, bool e4m3) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float x = 8.0f * (static_cast<float>(splitmix(i ^ (seed << 40)) >> 40) * 0x1p-24f) - 4.0f;
    data[i] = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, e4m3 ? __NV_E4M3 : __NV_E5M2);
  }
}

// A pool of `count` elements: 16-bit values of the storage, or fp8 bytes (in the buffer's first half).
void fill_pool(std::uint16_t* data, std::size_t count, std::uint64_t seed, const Options& o) {
  if (!o.fp8) return fill(data, count, seed, o.storage);
  fill_fp8<<<4096, 256>>>(reinterpret_cast<unsigned char*>(data), count, seed, *o.fp8 == Fp8Format::e4m3);
  check_launch("fill_fp8");
}


// What read_through sums of an element: any function of all its bits.
__device__ inline unsigned element_bits(const uint4& v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ inline unsigned element_bits(unsigned char v) { return v; }

// Reads every element of `data`, leaving its clean lines in the L2; the sum, written only where it equals one value
// and a destination is given (never, as the benchmark calls it), keeps the compiler from dropping the reads. The clean
// flush reads 16-byte pieces, --warm-metadata bytes (its buffers' sizes need not be multiples of 16).
template <typename Element>
__global__ void read_through(const Element* data, std::size_t count, unsigned* never_written) {
  unsigned sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    sum += element_bits(data[i]);
  if (sum == 0xdeadbeefu && never_written) *never_written = sum;
}

// A device buffer a timed run reads, for --warm-metadata.
struct Span {
  const void* data;
  std::size_t bytes;
};
void touch(const std::vector<Span>& spans) {
  for (const Span& span : spans) {
    if (span.bytes == 0) continue;
    read_through<<<64, 256>>>(static_cast<const unsigned char*>(span.data), span.bytes, nullptr);
    check_launch("read_through (metadata)");
  }
}

// The L2 flush before each timed run: overwrites a buffer larger than the L2, so that no run finds the previous one's
// data there; with a clean buffer, then reads it, so that the dirty lines are written back before the run, not
// during it.
struct L2Flush {
  DeviceBuffer<unsigned char> written;
  DeviceBuffer<unsigned char> clean;  // empty unless --clean-flush
  void operator()(int run) const {
    cuda_check(cudaMemsetAsync(written.get(), run & 0xff, written.size()), "flushing the L2");
    if (clean.size() == 0) return;
    read_through<<<4096, 256>>>(reinterpret_cast<const uint4*>(clean.get()), clean.size() / 16, nullptr);
    check_launch("read_through");
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The median CUDA-event time of `repeats` runs of `body` (on the default stream), each after the L2 flush and,
// untimed, the reads of `warm` (--warm-metadata).
template <typename Body>
double median_ms(int repeats, const L2Flush& l2_flush, Body body, const std::vector<Span>& warm = {}) {
  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) body();  // warm-up (first launches configure the kernels)
  cuda_check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    l2_flush(i);
    touch(warm);
    cuda_check(cudaEventRecord(start), "cudaEventRecord");
    body();
    cuda_check(cudaEventRecord(stop), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "timed run");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(times);
}

// The split size that fills the GPU in one wave of the layouts such a grid runs (wide or wide-evict-first,
// launch_rules.h). cuda_splitk takes it as its split_size knob.
int split_size_filling_gpu(int batch, int context, int gqa, int multiprocessors, KvCache cache) {
  const int resident = multiprocessors * resident_blocks_per_multiprocessor(Storage::bf16, kHeadDim, gqa, cache);
  return split_size_for_one_wave(context, batch * kKvHeads, resident,
                                 kernel_arithmetic(Storage::bf16, kHeadDim).max_tile_keys);
}

struct Row {
  int gqa, batch, context;
  std::string variant;
  int split_size;
  double ms, bytes, tbps;
  double max_abs_diff;  // largest |difference| from cuda_fused's output (a sanity check: a few bf16 ulps)
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

int run(const Options& o) {
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("device: %s, %d SMs, L2 %d MB, CUDA driver %d.%d, runtime %d.%d\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, driver / 1000, driver % 1000 / 10, runtime / 1000,
              runtime % 1000 / 10);
  const L2Flush l2_flush{DeviceBuffer<unsigned char>(std::size_t{256} << 20),
                         DeviceBuffer<unsigned char>(o.clean_flush ? std::size_t{256} << 20 : 0)};
  if (o.clean_flush) cuda_check(cudaMemset(l2_flush.clean.get(), 0, l2_flush.clean.size()), "memset");
  std::printf("L2 flush: %s\n", o.clean_flush ? "256 MB written, then 256 MB read (clean lines)"
                                             : "256 MB written (dirty lines)");
  if (o.warm_metadata)
    std::printf("after each flush: the plan, sequence records, block tables, query rows' sequences and queries "
                "read back\n");
  const KvCache kv_cache = o.fp8 ? kv_cache_of(*o.fp8) : KvCache::same;
  if (o.fp8) std::printf("KV cache: %s, scales per KV head\n", std::string(fp8_name(*o.fp8)).c_str());
  std::printf("logit options: soft cap %g, window %d, ALiBi %s, sinks %s\n", o.soft_cap, o.window,
              o.alibi ? "on" : "off", o.sinks ? "on" : "off");

  // Device-to-device copy: 4 GiB, bytes read plus written.
  double copy_tbps = 0;
  {
    const std::size_t bytes = std::size_t{4} << 30;
    DeviceBuffer<unsigned char> a(bytes), b(bytes);
    cuda_check(cudaMemset(a.get(), 1, bytes), "memset");
    const double ms = median_ms(o.repeats, l2_flush, [&] {
      cuda_check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
    });
    copy_tbps = 2.0 * bytes / (ms * 1e-3) / 1e12;
    std::printf("device-to-device copy: %.3f ms for %zu bytes, %.2f TB/s (read + write)\n\n", ms, bytes, copy_tbps);
  }

  // One pool for every shape: blocks for the largest batch x context, handed out in a random order.
  const int max_tokens = kBatches[3] * kContexts[2];
  const int num_blocks = max_tokens / kBlockSize + 1024;
  const std::size_t pool_elems = static_cast<std::size_t>(num_blocks) * kBlockSize * kKvHeads * kHeadDim;
  DeviceBuffer<std::uint16_t> k_pool(pool_elems), v_pool(pool_elems);
  fill_pool(k_pool.get(), pool_elems, 1, o);
  fill_pool(v_pool.get(), pool_elems, 2, o);
  // An fp8 cache's scales per KV head: powers of two near what a quantiser of these values picks, so that the
  // dequantised values stay in bf16's usual range.
  std::vector<float> k_scales, v_scales;
  for (int h = 0; o.fp8 && h < kKvHeads; ++h) {
    k_scales.push_back(std::ldexp(1.0f, -2 - h % 2));
    v_scales.push_back(std::ldexp(1.0f, -2 - (h + 1) % 2));
  }
  const DeviceBuffer<float> k_scales_d(k_scales), v_scales_d(v_scales);
  const double kv_element_bytes = tensor_core_kv_bytes(kv_cache);
  std::vector<int> order(num_blocks);
  std::iota(order.begin(), order.end(), 0);
  if (!o.sequential_pool) std::shuffle(order.begin(), order.end(), std::mt19937_64(7));

  std::vector<Row> rows;
  std::printf("%4s %6s %8s  %-18s %8s %10s %10s %8s\n", "gqa", "batch", "context", "variant", "split", "ms",
              "GB moved", "TB/s");
  // --only: that one shape, on or off the grid (within the pool: batch x context at most the grid's largest).
  const auto axis = [&](const auto& grid, int only) {
    return o.only_gqa ? std::vector<int>{only} : std::vector<int>(std::begin(grid), std::end(grid));
  };
  const std::vector<int> gqas = axis(kGqaRatios, o.only_gqa), batches = axis(kBatches, o.only_batch),
                         contexts = axis(kContexts, o.only_context);
  if (o.only_gqa && static_cast<long long>(o.only_batch) * o.only_context > max_tokens)
    throw std::invalid_argument("--only: batch x context must be at most " + std::to_string(max_tokens));
  for (int gqa : gqas) {
    for (int batch : batches) {
      for (int context : contexts) {
        const int query_heads = kKvHeads * gqa;
        std::vector<std::int32_t> tables;
        std::vector<SequenceMeta> sequences;
        const int blocks_per_sequence = context / kBlockSize;
        for (int s = 0; s < batch; ++s) {
          SequenceMeta meta;
          meta.context_len = context;
          meta.num_queries = 1;
          meta.query_row_offset = s;
          meta.table_offset = static_cast<int>(tables.size());
          sequences.push_back(meta);
          for (int b = 0; b < blocks_per_sequence; ++b) tables.push_back(order[s * blocks_per_sequence + b]);
        }
        std::vector<int> sequence_of_row(batch);
        std::iota(sequence_of_row.begin(), sequence_of_row.end(), 0);
        const DeviceBuffer<std::int32_t> tables_d(tables);
        const DeviceBuffer<SequenceMeta> sequences_d(sequences);
        const DeviceBuffer<int> sequence_of_row_d(sequence_of_row);
        const std::size_t q_elems = static_cast<std::size_t>(batch) * query_heads * kHeadDim;
        DeviceBuffer<std::uint16_t> queries(q_elems), out_fused(q_elems), out_splitk(q_elems);
        fill(queries.get(), q_elems, 3 + batch + context, o.storage);

        DeviceBatch db;
        db.storage = o.storage;
        db.kv_cache = kv_cache;
        db.k_scales = k_scales_d.get();
        db.v_scales = v_scales_d.get();
        db.num_query_heads = query_heads;
        db.num_kv_heads = kKvHeads;
        db.head_dim = kHeadDim;
        db.block_size = kBlockSize;
        db.num_blocks = num_blocks;
        db.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
        db.num_sequences = batch;
        db.total_queries = batch;
        db.k_pool = k_pool.get();
        db.v_pool = v_pool.get();
        db.queries = queries.get();
        db.block_tables = tables_d.get();
        db.sequences = sequences_d.get();
        db.sequence_of_query_row = sequence_of_row_d.get();
        // ALiBi's geometric slopes 2^(-8 (h + 1) / H); sinks of logit 0, among the scores of these values.
        std::vector<float> slopes, sinks;
        for (int h = 0; h < query_heads && o.alibi; ++h) slopes.push_back(std::exp2(-8.0f * (h + 1) / query_heads));
        if (o.sinks) sinks.assign(query_heads, 0.0f);
        const DeviceBuffer<float> slopes_d(slopes), sinks_d(sinks);
        db.soft_cap = o.soft_cap;
        db.window = o.window;
        db.alibi_slopes = slopes_d.get();
        db.sinks = sinks_d.get();

        // Bytes: the K and V of the keys the query sees (the window's, with one), Q, the per-head option arrays and
        // the output.
        const int keys_read = o.window > 0 ? std::min(o.window, context) : context;
        const double bytes = 2.0 * batch * keys_read * kKvHeads * kHeadDim * kv_element_bytes + 2.0 * q_elems * 2 +
                             4.0 * (slopes.size() + sinks.size() + k_scales.size() + v_scales.size());
        const int split = o.split > 0 ? o.split
                                      : split_size_filling_gpu(batch, keys_read, gqa, prop.multiProcessorCount,
                                                               kv_cache);
        const AttentionPlan fused_host = plan_attention(sequences, query_heads, kKvHeads, o.tile_size, {}, o.window);
        const AttentionPlan splitk_host = plan_attention(sequences, query_heads, kKvHeads, o.tile_size,
                                                         std::vector<int>(batch, split), o.window);
        const PlanOnDevice fused_plan(fused_host, kKvHeads, kHeadDim);
        const PlanOnDevice splitk_plan(splitk_host, kKvHeads, kHeadDim);
        // What a launch reads before any K/V: the batch's metadata, queries, work items and the merge's indexes.
        const auto metadata = [&](const AttentionPlan& host, const DevicePlan& plan) {
          if (!o.warm_metadata) return std::vector<Span>{};
          return std::vector<Span>{
              {sequences_d.get(), sequences.size() * sizeof(SequenceMeta)},
              {tables_d.get(), tables.size() * sizeof(std::int32_t)},
              {sequence_of_row_d.get(), sequence_of_row.size() * sizeof(int)},
              {queries.get(), q_elems * sizeof(std::uint16_t)},
              {plan.items, host.items.size() * sizeof(WorkItem)},
              {plan.split_sizes, host.split_sizes.size() * sizeof(int)},
              {plan.chunk_offsets, host.chunk_offsets.size() * sizeof(int)},
              {plan.chunk_first_item, host.chunk_first_item.size() * sizeof(int)}};
        };
        const std::vector<Span> fused_metadata = metadata(fused_host, fused_plan.view());
        const std::vector<Span> splitk_metadata = metadata(splitk_host, splitk_plan.view());
        DeviceBatch fused_batch = db, splitk_batch = db;
        fused_batch.output = out_fused.get();
        splitk_batch.output = out_splitk.get();
        const double fused_ms = median_ms(
            o.repeats, l2_flush, [&] { launch_attention(fused_batch, fused_plan.view(), o.pins, nullptr); },
            fused_metadata);
        const double splitk_ms = median_ms(
            o.repeats, l2_flush, [&] { launch_attention(splitk_batch, splitk_plan.view(), o.pins, nullptr); },
            splitk_metadata);
        check_completion(nullptr, "benchmark");

        // The two kernels' outputs should agree to a few ulps (different summation orders).
        const std::vector<std::uint16_t> a = out_fused.download(), b = out_splitk.download();
        const auto widen = o.storage == Storage::f16 ? from_f16_bits : from_bf16_bits;
        double diff = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
          diff = std::max(diff, static_cast<double>(std::fabs(widen(a[i]) - widen(b[i]))));
        if (!(diff < 0.05)) std::printf("WARNING: cuda_fused and cuda_splitk differ by %g\n", diff);

        const auto tbps = [&](double ms) { return bytes / (ms * 1e-3) / 1e12; };
        rows.push_back({gqa, batch, context, "cuda_fused", context, fused_ms, bytes, tbps(fused_ms), diff});
        rows.push_back({gqa, batch, context, "cuda_splitk", split, splitk_ms, bytes, tbps(splitk_ms), diff});
        std::size_t printed = rows.size() - 2;
        if (o.stages) {
          // The split-K plan's attention kernel alone: as a fused plan its blocks normalise their partial results into
          // the output (overwriting each other's rows), and no merge runs.
          DevicePlan attention_only = splitk_plan.view();
          attention_only.split_k = false;
          const double ms = median_ms(
              o.repeats, l2_flush, [&] { launch_attention(splitk_batch, attention_only, o.pins, nullptr); },
              splitk_metadata);
          check_completion(nullptr, "split-K attention alone");
          rows.push_back({gqa, batch, context, "splitk_no_merge", split, ms, bytes, tbps(ms), 0.0});
        }
        for (std::size_t i = printed; i < rows.size(); ++i)
          std::printf("%4d %6d %8d  %-18s %8d %10.4f %10.3f %8.3f\n", rows[i].gqa, rows[i].batch, rows[i].context,
                      rows[i].variant.c_str(), rows[i].split_size, rows[i].ms, rows[i].bytes / 1e9, rows[i].tbps);
        std::fflush(stdout);
      }
    }
  }

  FILE* f = std::fopen(o.json_path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + o.json_path);
  std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"multiprocessors\": %d,\n  \"cuda_driver\": \"%d.%d\",\n",
               json_escape(prop.name).c_str(), prop.multiProcessorCount, driver / 1000, driver % 1000 / 10);
  std::fprintf(f, "  \"cuda_runtime\": \"%d.%d\",\n  \"repeats\": %d,\n  \"tile_size\": %d,\n", runtime / 1000,
               runtime % 1000 / 10, o.repeats, o.tile_size);
  std::fprintf(f, "  \"clean_flush\": %s,\n  \"warm_metadata\": %s,\n", o.clean_flush ? "true" : "false",
               o.warm_metadata ? "true" : "false");
  std::fprintf(f, "  \"layout\": \"%s\",\n  \"merge\": \"%s\",\n", knob_name(o.pins.layout), knob_name(o.pins.merge));
  std::fprintf(f, "  \"logit_options\": {\"soft_cap\": %g, \"window\": %d, \"alibi\": %s, \"sinks\": %s},\n",
               o.soft_cap, o.window, o.alibi ? "true" : "false", o.sinks ? "true" : "false");
  std::fprintf(f, "  \"shape\": {\"dtype\": \"%s\", \"kv_cache\": \"%s\", \"head_dim\": %d, \"block_size\": %d, "
                  "\"num_kv_heads\": %d, \"mode\": \"decode\", \"blocks\": \"scattered\"},\n",
               o.storage == Storage::f16 ? "fp16" : "bf16",
               o.fp8 ? std::string(fp8_name(*o.fp8)).c_str() : "same", kHeadDim, kBlockSize, kKvHeads);
  std::fprintf(f, "  \"copy_tbps\": %.4f,\n  \"results\": [\n", copy_tbps);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "    {\"variant\": \"%s\", \"gqa\": %d, \"batch\": %d, \"context\": %d, \"split_size\": %d, "
                 "\"ms\": %.5f, \"bytes\": %.0f, \"tbps\": %.4f, \"max_abs_diff_from_fused\": %.3g}%s\n",
                 r.variant.c_str(), r.gqa, r.batch, r.context, r.split_size, r.ms, r.bytes, r.tbps, r.max_abs_diff,
                 i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
  std::printf("\nwrote %s\n", o.json_path.c_str());
  return 0;
}

}  // namespace
}  // namespace pacheck::cuda

int main(int argc, char** argv) {
  pacheck::cuda::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json") o.json_path = value();
    else if (a == "--repeats") o.repeats = std::max(1, std::atoi(value().c_str()));
    else if (a == "--tile-size") o.tile_size = std::max(1, std::atoi(value().c_str()));
    else if (a == "--layout" || a == "--merge") {
      const std::string name = value();
      const auto layout = pacheck::parse_kernel_layout(name);
      const auto merge = pacheck::parse_merge_shape(name);
      if (a == "--layout" ? !layout : !merge) {
        std::fprintf(stderr, "%s takes one of %s\n", a.c_str(),
                     (a == "--layout" ? pacheck::kernel_layout_names() : pacheck::merge_shape_names()).c_str());
        return 2;
      }
      if (a == "--layout") o.pins.layout = *layout;
      else o.pins.merge = *merge;
    }
    else if (a == "--split") o.split = std::max(0, std::atoi(value().c_str()));
    else if (a == "--sequential-pool") o.sequential_pool = true;
    else if (a == "--stages") o.stages = true;
    else if (a == "--clean-flush") o.clean_flush = true;
    else if (a == "--warm-metadata") o.warm_metadata = true;
    else if (a == "--soft-cap" || a == "--window") {
      const std::string text = value();
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      const bool whole = a == "--soft-cap" || x == std::floor(x);
      if (end == text.c_str() || *end != '\0' || !(x > 0 && x < 1e9) || !whole) {
        std::fprintf(stderr, "%s takes a positive %s, got '%s'\n", a.c_str(),
                     a == "--soft-cap" ? "finite number" : "whole number", text.c_str());
        return 2;
      }
      if (a == "--soft-cap") o.soft_cap = static_cast<float>(x);
      else o.window = static_cast<int>(x);
    }
    else if (a == "--alibi") o.alibi = true;
    else if (a == "--dtype") {
      const std::string dtype = value();
      if (dtype != "bf16" && dtype != "fp16") {
        std::fprintf(stderr, "--dtype takes bf16 or fp16, not %s\n", dtype.c_str());
        return 2;
      }
      o.storage = dtype == "fp16" ? pacheck::cuda::Storage::f16 : pacheck::cuda::Storage::bf16;
    }
    else if (a == "--sinks") o.sinks = true;
    else if (a == "--kv-cache") {
      const std::string cache = value();
      o.fp8 = pacheck::parse_fp8(cache);
      if (!o.fp8) {
        std::fprintf(stderr, "--kv-cache takes fp8_e4m3 or fp8_e5m2, not %s\n", cache.c_str());
        return 2;
      }
    }
    else if (a == "--only") {
      if (std::sscanf(value().c_str(), "%d,%d,%d", &o.only_gqa, &o.only_batch, &o.only_context) != 3 ||
          o.only_gqa < 1 || o.only_gqa > 8 || o.only_batch < 1 || o.only_context < 16 || o.only_context % 16 != 0) {
        std::fprintf(stderr, "--only takes GQA,BATCH,CONTEXT: GQA 1 to 8, BATCH at least 1, CONTEXT a multiple of "
                             "the block size 16\n");
        return 2;
      }
    }
    else {
      std::fprintf(stderr,
                   "unknown option %s\nusage: %s [--json FILE] [--repeats N] [--tile-size N] [--layout L] [--merge M] "
                   "[--only G,B,C] [--split N] [--sequential-pool] [--stages] [--clean-flush] [--warm-metadata] "
                   "[--soft-cap CAP] [--window W] [--alibi] [--sinks] [--dtype bf16|fp16] [--kv-cache fp8_e4m3|fp8_e5m2]\n",
                   a.c_str(), argv[0]);
      return 2;
    }
  }
  try {
    return pacheck::cuda::run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "paged_attention_bench: %s\n", e.what());
    return 1;
  }
}
