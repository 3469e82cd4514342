// The plugin ABI's plain views of a Problem (plugin_views.h).
#include "plugin/plugin_views.h"

#include <algorithm>
#include <limits>

namespace pacheck::plugin {
namespace {

std::vector<std::uint16_t> to_bits(const std::vector<float>& values, DType dtype) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    bits[i] = dtype == DType::f16 ? to_f16_bits(values[i]) : to_bf16_bits(values[i]);
  return bits;
}

// The quiet NaN of a 16-bit dtype.
std::uint16_t nan_bits(DType dtype) { return dtype == DType::f16 ? 0x7e00 : 0x7fc0; }

std::uint32_t abi_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return PACHECK_DTYPE_F32;
    case DType::f16: return PACHECK_DTYPE_F16;
    case DType::bf16: return PACHECK_DTYPE_BF16;
  }
  return 0;
}

}  // namespace

HostInputs::HostInputs(const Problem& p)
    : query_elements(p.queries.size()), pool_elements(p.k_pool.size()) {
  if (p.dtype == DType::f32) {
    queries = p.queries.data();
    k_pool = p.k_pool.data();
    v_pool = p.v_pool.data();
  } else {
    element_bytes = 2;
    queries16_ = to_bits(p.queries, p.dtype);
    k16_ = to_bits(p.k_pool, p.dtype);
    v16_ = to_bits(p.v_pool, p.dtype);
    queries = queries16_.data();
    k_pool = k16_.data();
    v_pool = v16_.data();
  }
  if (p.fp8_cache) {
    // The pools in the cache's format: every value is representable (validate checks), so the bytes are exact.
    const auto to_bytes = [format = p.fp8_cache->format](const std::vector<float>& values) {
      std::vector<std::uint8_t> bytes(values.size());
      std::transform(values.begin(), values.end(), bytes.begin(), [format](float x) { return to_fp8_bits(x, format); });
      return bytes;
    };
    pool_element_bytes = 1;
    k8_ = to_bytes(p.k_pool);
    v8_ = to_bytes(p.v_pool);
    k_pool = k8_.data();
    v_pool = v8_.data();
  } else {
    pool_element_bytes = element_bytes;
  }
  for (const Sequence& s : p.sequences)
    block_table_width = std::max(block_table_width, static_cast<int>(s.block_table.size()));
  block_tables.assign(p.sequences.size() * static_cast<std::size_t>(block_table_width), -1);
  query_starts.push_back(0);
  for (std::size_t s = 0; s < p.sequences.size(); ++s) {
    const Sequence& seq = p.sequences[s];
    std::copy(seq.block_table.begin(), seq.block_table.end(), block_tables.begin() + s * block_table_width);
    context_lens.push_back(seq.context_len);
    query_lens.push_back(seq.num_queries);
    query_starts.push_back(query_starts.back() + seq.num_queries);
    max_context_len = std::max(max_context_len, seq.context_len);
  }
}

HostOutput::HostOutput(const Problem& p) : dtype_(p.dtype) {
  if (dtype_ == DType::f32)
    f32_.assign(p.output_size(), std::numeric_limits<float>::quiet_NaN());
  else
    bits_.assign(p.output_size(), nan_bits(dtype_));
}

std::vector<float> HostOutput::to_floats() const {
  if (dtype_ == DType::f32) return f32_;
  std::vector<float> out(bits_.size());
  for (std::size_t i = 0; i < bits_.size(); ++i)
    out[i] = dtype_ == DType::f16 ? from_f16_bits(bits_[i]) : from_bf16_bits(bits_[i]);
  return out;
}

pacheck_run_args host_run_args(const Problem& p, const Knobs& knobs, const HostInputs& in, HostOutput& out) {
  pacheck_run_args a{};
  a.struct_size = sizeof(pacheck_run_args);
  a.dtype = abi_dtype(p.dtype);
  a.memory = PACHECK_MEMORY_HOST;
  a.num_sequences = static_cast<std::int32_t>(p.sequences.size());
  a.total_queries = p.total_queries();
  a.num_query_heads = p.num_query_heads;
  a.num_kv_heads = p.num_kv_heads;
  a.head_dim = p.head_dim;
  a.num_blocks = p.num_blocks;
  a.block_size = p.block_size;
  a.block_table_width = in.block_table_width;
  a.max_context_len = in.max_context_len;
  a.scale = p.scale();
  a.tile_size = knobs.tile_size;
  a.split_size = knobs.split_size;
  a.num_splits = knobs.num_splits;
  const std::int64_t d = p.head_dim;
  const std::int64_t row = static_cast<std::int64_t>(p.num_query_heads) * d;
  const std::int64_t slot = static_cast<std::int64_t>(p.num_kv_heads) * d;
  const std::int64_t query_strides[3] = {row, d, 1};
  const std::int64_t kv_strides[4] = {slot * p.block_size, slot, d, 1};
  a.queries = in.queries;
  std::copy(std::begin(query_strides), std::end(query_strides), a.query_strides);
  a.k_pool = in.k_pool;
  std::copy(std::begin(kv_strides), std::end(kv_strides), a.k_strides);
  a.v_pool = in.v_pool;
  std::copy(std::begin(kv_strides), std::end(kv_strides), a.v_strides);
  a.block_tables = in.block_tables.data();
  a.block_table_stride = in.block_table_width;
  a.context_lens = in.context_lens.data();
  a.query_lens = in.query_lens.data();
  a.query_starts = in.query_starts.data();
  a.output = out.data();
  std::copy(std::begin(query_strides), std::end(query_strides), a.output_strides);
  // The logit options, each absent as 0 or null; the arrays are read in place from the problem.
  const LogitOptions& o = p.options;
  a.soft_cap = o.soft_cap.value_or(0.0f);
  a.window = o.window.value_or(0);
  a.alibi_slopes = o.alibi_slopes.empty() ? nullptr : o.alibi_slopes.data();
  a.sinks = o.sinks.empty() ? nullptr : o.sinks.data();
  // The fp8 cache, absent as 0 and null.
  if (const std::optional<Fp8Cache>& fp8 = p.fp8_cache) {
    a.fp8_cache = fp8->format == Fp8Format::e4m3 ? PACHECK_FP8_E4M3 : PACHECK_FP8_E5M2;
    a.num_k_scales = static_cast<std::int32_t>(fp8->k_scales.size());
    a.k_scales = fp8->k_scales.data();
    a.num_v_scales = static_cast<std::int32_t>(fp8->v_scales.size());
    a.v_scales = fp8->v_scales.data();
  }
  return a;
}

}  // namespace pacheck::plugin
