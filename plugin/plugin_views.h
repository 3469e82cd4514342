// A Problem as the plugin ABI's plain views (include/pacheck/plugin.h): storage-dtype arrays, padded block tables,
// per-sequence lengths and offsets, and an output buffer that converts back to floats. Conversions are exact: the
// problem's floats are representable in its dtype, and the 16-bit patterns map one to one onto those floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacheck/plugin.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::plugin {

// PACHECK_DTYPE_* of a dtype; PACHECK_FP8_* of an fp8 format.
std::uint32_t abi_dtype(DType dtype);
std::uint32_t abi_fp8(Fp8Format format);

// The inputs in host memory: fp32 arrays read in place from the problem (which must outlive this), fp16 and bf16
// arrays as their bit patterns, an fp8 cache's pools as its one-byte patterns. Not copyable: it points into itself.
class HostInputs {
 public:
  explicit HostInputs(const Problem& problem);
  HostInputs(const HostInputs&) = delete;
  HostInputs& operator=(const HostInputs&) = delete;

  std::size_t element_bytes() const { return element_bytes_; }
  std::size_t pool_element_bytes() const { return pool_element_bytes_; }  // 1 for an fp8 cache
  const void* queries() const { return queries_; }
  const void* k_pool() const { return k_pool_; }
  const void* v_pool() const { return v_pool_; }
  std::size_t query_elements() const { return query_elements_; }
  std::size_t pool_elements() const { return pool_elements_; }
  // [num_sequences][block_table_width]: each sequence's table, its entries past its own table set to -1.
  const std::vector<std::int32_t>& block_tables() const { return block_tables_; }
  int block_table_width() const { return block_table_width_; }
  const std::vector<std::int32_t>& context_lens() const { return context_lens_; }
  const std::vector<std::int32_t>& query_lens() const { return query_lens_; }
  const std::vector<std::int32_t>& query_starts() const { return query_starts_; }  // num_sequences + 1 entries
  int max_context_len() const { return max_context_len_; }

 private:
  std::size_t element_bytes_ = 4;
  std::size_t pool_element_bytes_ = 4;
  std::vector<std::uint16_t> queries16_, k16_, v16_;
  std::vector<std::uint8_t> k8_, v8_;
  const void* queries_ = nullptr;
  const void* k_pool_ = nullptr;
  const void* v_pool_ = nullptr;
  std::size_t query_elements_ = 0;
  std::size_t pool_elements_ = 0;
  std::vector<std::int32_t> block_tables_;
  int block_table_width_ = 0;
  std::vector<std::int32_t> context_lens_, query_lens_, query_starts_;
  int max_context_len_ = 0;
};

// The output in host memory, in the problem's dtype, filled with NaN so that an element the kernel leaves unwritten
// fails.
class HostOutput {
 public:
  explicit HostOutput(const Problem& problem);
  void* data() { return dtype_ == DType::f32 ? static_cast<void*>(f32_.data()) : static_cast<void*>(bits_.data()); }
  std::size_t bytes() const { return dtype_ == DType::f32 ? f32_.size() * 4 : bits_.size() * 2; }
  // The output as floats (the pacheck Output), exact.
  std::vector<float> to_floats() const;

 private:
  DType dtype_;
  std::vector<float> f32_;
  std::vector<std::uint16_t> bits_;
};

// The run arguments over these host views, with contiguous strides, the logit options and the fp8 cache (slopes,
// sinks and scales read in place from the problem, which must outlive the call). A device run swaps in its copies.
pacheck_run_args host_run_args(const Problem& problem, const Knobs& knobs, const HostInputs& inputs,
                               HostOutput& output);

}  // namespace pacheck::plugin
