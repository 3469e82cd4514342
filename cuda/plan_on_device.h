// An AttentionPlan copied to the device, with the scratch space for split-K's partial states. C++17.
#pragma once

#include "cuda/device_buffer.h"
#include "cuda/paged_attention.h"

namespace pacheck::cuda {

class PlanOnDevice {
 public:
  PlanOnDevice(const AttentionPlan& plan, int num_kv_heads, int head_dim);
  const DevicePlan& view() const { return view_; }

 private:
  DeviceBuffer<WorkItem> items_;
  DeviceBuffer<int> split_sizes_;
  DeviceBuffer<int> chunk_offsets_;
  DeviceBuffer<int> chunk_first_item_;
  DeviceBuffer<float> partial_max_;
  DeviceBuffer<float> partial_denominator_;
  DeviceBuffer<float> partial_acc_;
  DevicePlan view_;
};

}  // namespace pacheck::cuda
