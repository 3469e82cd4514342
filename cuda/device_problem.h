// A Problem on the device in its storage dtype (an fp8 cache's pools in its format), and both CUDA variants' entry
// point: upload, plan, launch, wait (errors as CudaError with the runtime's text), download.
#pragma once

#include <string>
#include <vector>

#include "cuda/device_buffer.h"
#include "cuda/paged_attention.h"
#include "problem/knobs.h"
#include "problem/problem.h"

namespace pacheck::cuda {

// How the kernels store a problem's dtype, and read its pools (values of that dtype, or an fp8 cache).
Storage storage_of(DType dtype);
KvCache kv_cache_of(Fp8Format format);
KvCache kv_cache_of(const Problem& problem);

class DeviceProblem {
 public:
  // The problem must be valid (validate()); values convert exactly to the storage dtype.
  explicit DeviceProblem(const Problem& problem);
  const DeviceBatch& batch() const { return batch_; }
  // The records of batch().sequences, on the host (what plan_attention takes).
  const std::vector<SequenceMeta>& sequences() const { return sequences_host_; }
  // The output, converted back to floats (exactly: every value is representable).
  Output download_output() const;

 private:
  DType dtype_;
  DeviceBuffer<unsigned char> k_pool_, v_pool_, queries_, output_;
  DeviceBuffer<std::int32_t> tables_;
  std::vector<SequenceMeta> sequences_host_;
  DeviceBuffer<SequenceMeta> sequences_;
  DeviceBuffer<int> sequence_of_query_row_;
  DeviceBuffer<float> alibi_slopes_, sinks_;  // empty (null) without the option
  DeviceBuffer<float> k_scales_, v_scales_;    // an fp8 cache's, per KV head; empty (null) without one
  DeviceBatch batch_;
};

// What enqueues the kernels: launch_attention, or a mutant's launch (cuda/mutants/).
using LaunchAttention = void (*)(const DeviceBatch&, const DevicePlan&, const KernelPins&, cudaStream_t);

// Runs the attention kernel on `problem`, split-K (effective_split_size(knobs, context_len) per sequence) or fused,
// the L2 evicted first. Throws std::runtime_error naming `variant` without a CUDA device, CudaError when a launch or
// the kernel fails.
Output run_paged_attention(const Problem& problem, const Knobs& knobs, bool split_k, const std::string& variant,
                           LaunchAttention launch = launch_attention);

}  // namespace pacheck::cuda
