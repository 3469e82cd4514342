#include "cuda/device_problem.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/device_probe.h"
#include "cuda/launch_rules.h"
#include "cuda/plan_on_device.h"

namespace pacheck::cuda {
Storage storage_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return Storage::f32;
    case DType::f16: return Storage::f16;
    case DType::bf16: return Storage::bf16;
  }
  throw std::invalid_argument("unknown dtype");
}

KvCache kv_cache_of(Fp8Format format) { return format == Fp8Format::e4m3 ? KvCache::e4m3 : KvCache::e5m2; }
KvCache kv_cache_of(const Problem& problem) {
  return problem.fp8_cache ? kv_cache_of(problem.fp8_cache->format) : KvCache::same;
}

namespace {

// The values as the device stores them: raw fp32, or the 16-bit patterns.
std::vector<unsigned char> encode(const std::vector<float>& values, DType dtype) {
  std::vector<unsigned char> bytes(values.size() * (dtype == DType::f32 ? 4 : 2));
  if (dtype == DType::f32) {
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = dtype == DType::f16 ? to_f16_bits(values[i]) : to_bf16_bits(values[i]);
    std::memcpy(&bytes[2 * i], &bits, 2);
  }
  return bytes;
}

// A pool as the device stores it: in the problem's dtype, or an fp8 cache's bytes.
std::vector<unsigned char> encode_pool(const std::vector<float>& values, const Problem& p) {
  if (!p.fp8_cache) return encode(values, p.dtype);
  std::vector<unsigned char> bytes(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) bytes[i] = to_fp8_bits(values[i], p.fp8_cache->format);
  return bytes;
}

// An fp8 cache's scales, one per KV head (a per-tensor scale repeated); empty without a cache.
std::vector<float> scales_per_kv_head(const Problem& p, bool k) {
  std::vector<float> scales;
  if (p.fp8_cache)
    for (int h = 0; h < p.num_kv_heads; ++h) scales.push_back(k ? p.fp8_cache->k_scale(h) : p.fp8_cache->v_scale(h));
  return scales;
}

std::vector<float> decode(const std::vector<unsigned char>& bytes, DType dtype) {
  if (dtype == DType::f32) {
    std::vector<float> values(bytes.size() / 4);
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  std::vector<float> values(bytes.size() / 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, &bytes[2 * i], 2);
    values[i] = dtype == DType::f16 ? from_f16_bits(bits) : from_bf16_bits(bits);
  }
  return values;
}

// Writes a buffer twice the L2's size (allocated once per process) on `stream`, so the next launch reads from device
// memory as a serving engine's decode does: the L2's short latency would hide a pipeline waited one stage late.
void evict_l2(cudaStream_t stream) {
  static const std::pair<void*, std::size_t> buffer = [] {
    int device = 0, l2_bytes = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "reading the L2 size");
    const std::size_t bytes = 2 * static_cast<std::size_t>(std::max(l2_bytes, 1 << 20));
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, bytes), "allocating the L2 eviction buffer");
    return std::pair{p, bytes};
  }();
  cuda_check(cudaMemsetAsync(buffer.first, 0, buffer.second, stream), "evicting the L2");
}

}  // namespace

DeviceProblem::DeviceProblem(const Problem& p)
    : dtype_(p.dtype),
      k_pool_(encode_pool(p.k_pool, p)),
      v_pool_(encode_pool(p.v_pool, p)),
      queries_(encode(p.queries, p.dtype)),
      output_(p.output_size() * (p.dtype == DType::f32 ? 4 : 2)),
      alibi_slopes_(p.options.alibi_slopes),
      sinks_(p.options.sinks),
      k_scales_(scales_per_kv_head(p, true)),
      v_scales_(scales_per_kv_head(p, false)) {
  std::vector<std::int32_t> tables;
  std::vector<int> sequence_of_query_row;
  int query_row = 0;
  for (std::size_t s = 0; s < p.sequences.size(); ++s) {
    const Sequence& seq = p.sequences[s];
    SequenceMeta meta;
    meta.context_len = seq.context_len;
    meta.num_queries = seq.num_queries;
    meta.query_row_offset = query_row;
    meta.table_offset = static_cast<int>(tables.size());
    sequences_host_.push_back(meta);
    tables.insert(tables.end(), seq.block_table.begin(), seq.block_table.end());  // padding too: never followed
    sequence_of_query_row.insert(sequence_of_query_row.end(), seq.num_queries, static_cast<int>(s));
    query_row += seq.num_queries;
  }
  tables_ = DeviceBuffer<std::int32_t>(tables);
  sequences_ = DeviceBuffer<SequenceMeta>(sequences_host_);
  sequence_of_query_row_ = DeviceBuffer<int>(sequence_of_query_row);
  // Every output element is written by the kernels; NaN-fill first so that one left out fails loudly.
  if (output_.size() > 0) cuda_check(cudaMemset(output_.get(), 0xff, output_.size()), "filling the output");

  batch_.storage = storage_of(p.dtype);
  batch_.kv_cache = kv_cache_of(p);
  batch_.k_scales = k_scales_.get();
  batch_.v_scales = v_scales_.get();
  batch_.num_query_heads = p.num_query_heads;
  batch_.num_kv_heads = p.num_kv_heads;
  batch_.head_dim = p.head_dim;
  batch_.block_size = p.block_size;
  batch_.num_blocks = p.num_blocks;
  batch_.scale = p.scale();
  batch_.num_sequences = static_cast<int>(p.sequences.size());
  batch_.total_queries = p.total_queries();
  batch_.k_pool = k_pool_.get();
  batch_.v_pool = v_pool_.get();
  batch_.queries = queries_.get();
  batch_.output = output_.get();
  batch_.block_tables = tables_.get();
  batch_.sequences = sequences_.get();
  batch_.sequence_of_query_row = sequence_of_query_row_.get();
  batch_.soft_cap = p.options.soft_cap.value_or(0.0f);
  batch_.window = p.options.window.value_or(0);
  batch_.alibi_slopes = alibi_slopes_.get();
  batch_.sinks = sinks_.get();
}

Output DeviceProblem::download_output() const { return decode(output_.download(), dtype_); }

Output run_paged_attention(const Problem& problem, const Knobs& knobs, bool split_k, const std::string& variant,
                           LaunchAttention launch) {
  std::string reason;
  if (!cuda_device_available(&reason)) throw std::runtime_error(variant + " needs a CUDA device: " + reason);
  validate(problem);
  if (problem.head_dim > kMaxHeadDim)
    throw std::invalid_argument(variant + " takes head dims up to " + std::to_string(kMaxHeadDim) + ", got " +
                                std::to_string(problem.head_dim));
  std::vector<int> split_sizes;
  for (const Sequence& s : problem.sequences)
    if (split_k) split_sizes.push_back(effective_split_size(knobs, s.context_len));
  const DeviceProblem device(problem);
  const AttentionPlan plan =
      plan_attention(device.sequences(), problem.num_query_heads, problem.num_kv_heads, knobs.tile_size, split_sizes,
                     device.batch().window);
  const PlanOnDevice plan_on_device(plan, problem.num_kv_heads, problem.head_dim);
  evict_l2(nullptr);
  launch(device.batch(), plan_on_device.view(), knobs.pins, nullptr);
  check_completion(nullptr, variant);
  return device.download_output();
}

}  // namespace pacheck::cuda
