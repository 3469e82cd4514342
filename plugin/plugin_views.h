// A Problem as the plugin ABI's plain views (include/pacheck/plugin.h): storage-dtype arrays, padded block tables,
// per-sequence lengths and offsets, and an output buffer that converts back to floats. Conversions are exact: the
// problem's floats are representable in its dtype, and 16-bit patterns map one to one onto those floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacheck/plugin.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::plugin {

// The inputs in host memory: fp32 arrays read in place from the problem (which must outlive this), fp16 and bf16
// arrays as their bit patterns, an fp8 cache's pools as its one-byte patterns. Not copyable: it points into itself.
struct HostInputs {
  explicit HostInputs(const Problem& problem);
  HostInputs(const HostInputs&) = delete;
  HostInputs& operator=(const HostInputs&) = delete;

  std::size_t element_bytes = 4;
  std::size_t pool_element_bytes = 4;  // 1 for an fp8 cache
  const void* queries = nullptr;
  const void* k_pool = nullptr;
  const void* v_pool = nullptr;
  std::size_t query_elements = 0;
  std::size_t pool_elements = 0;
  // [num_sequences][block_table_width]: each sequence's table, its entries past its own table set to -1.
  std::vector<std::int32_t> block_tables;
  int block_table_width = 0;
  std::vector<std::int32_t> context_lens, query_lens;
  std::vector<std::int32_t> query_starts;  // num_sequences + 1 entries
  int max_context_len = 0;

 private:
  // The converted arrays the pointers above point into.
  std::vector<std::uint16_t> queries16_, k16_, v16_;
  std::vector<std::uint8_t> k8_, v8_;
};

// The output in host memory, in the problem's dtype, NaN-filled so that an element the kernel leaves unwritten fails.
class HostOutput {
 public:
  explicit HostOutput(const Problem& problem);
  void* data() { return dtype_ == DType::f32 ? static_cast<void*>(f32_.data()) : static_cast<void*>(bits_.data()); }
  std::size_t bytes() const { return dtype_ == DType::f32 ? f32_.size() * 4 : bits_.size() * 2; }
  // The pacheck Output, exact.
  std::vector<float> to_floats() const;

 private:
  DType dtype_;
  std::vector<float> f32_;
  std::vector<std::uint16_t> bits_;
};

// The run arguments over these host views: contiguous strides, the logit options and the fp8 cache (slopes, sinks
// and scales read in place from the problem, which must outlive the call). A device run swaps in its copies.
pacheck_run_args host_run_args(const Problem& problem, const Knobs& knobs, const HostInputs& inputs,
                               HostOutput& output);

}  // namespace pacheck::plugin
