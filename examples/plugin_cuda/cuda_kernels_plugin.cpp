// pacheck's own CUDA kernels (cuda_fused, cuda_splitk) served through the plugin ABI over device memory, the way an
// engine's kernels would be: what proves the plugin door on the GPU, and a template for a CUDA plugin.
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/plan_on_device.h"
#include "pacheck/plugin.h"

namespace {

using namespace pacheck::cuda;

struct Kernel {
  bool split_k;
};
const Kernel kFused{false};
const Kernel kSplitK{true};

Storage storage_of(uint32_t dtype) {
  return dtype == PACHECK_DTYPE_F32 ? Storage::f32 : dtype == PACHECK_DTYPE_F16 ? Storage::f16 : Storage::bf16;
}

bool contiguous(const int64_t* strides, std::initializer_list<int64_t> shape) {
  int64_t expected = 1;
  std::vector<int64_t> dims(shape);
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (dims[i] > 1 && strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

template <typename T>
std::vector<T> download(const T* device, int count) {
  std::vector<T> host(count);
  if (count > 0)
    cuda_check(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), "reading the run's lengths");
  return host;
}

// The run: the views as a DeviceBatch (the kernels take the ABI's contiguous layouts and logit options as they are),
// the per-sequence records and the plan built on the host, one launch, and a wait.
void run_kernel(const Kernel& kernel, const pacheck_run_args& a) {
  const int64_t hd = a.head_dim;
  if (!contiguous(a.query_strides, {a.total_queries, a.num_query_heads, hd}) ||
      !contiguous(a.output_strides, {a.total_queries, a.num_query_heads, hd}) ||
      !contiguous(a.k_strides, {a.num_blocks, a.block_size, a.num_kv_heads, hd}) ||
      !contiguous(a.v_strides, {a.num_blocks, a.block_size, a.num_kv_heads, hd}))
    throw std::invalid_argument("the kernels take contiguous queries, pools and output");
  const std::vector<int32_t> context_lens = download(a.context_lens, a.num_sequences);
  const std::vector<int32_t> query_lens = download(a.query_lens, a.num_sequences);
  const std::vector<int32_t> query_starts = download(a.query_starts, a.num_sequences + 1);
  std::vector<SequenceMeta> sequences(a.num_sequences);
  std::vector<int> sequence_of_row(a.total_queries);
  std::vector<int> split_sizes;
  for (int s = 0; s < a.num_sequences; ++s) {
    sequences[s] = SequenceMeta{context_lens[s], query_lens[s], query_starts[s],
                                static_cast<int>(s * a.block_table_stride)};
    for (int r = query_starts[s]; r < query_starts[s + 1]; ++r) sequence_of_row[r] = s;
    if (kernel.split_k)
      split_sizes.push_back(a.num_splits > 0 ? (context_lens[s] + a.num_splits - 1) / a.num_splits : a.split_size);
  }
  const DeviceBuffer<SequenceMeta> sequences_device(sequences);
  const DeviceBuffer<int> sequence_of_row_device(sequence_of_row);
  DeviceBatch batch;
  batch.storage = storage_of(a.dtype);
  batch.num_query_heads = a.num_query_heads;
  batch.num_kv_heads = a.num_kv_heads;
  batch.head_dim = a.head_dim;
  batch.block_size = a.block_size;
  batch.num_blocks = a.num_blocks;
  batch.scale = a.scale;
  batch.num_sequences = a.num_sequences;
  batch.total_queries = a.total_queries;
  batch.k_pool = a.k_pool;
  batch.v_pool = a.v_pool;
  batch.queries = a.queries;
  batch.output = a.output;
  batch.block_tables = a.block_tables;
  batch.sequences = sequences_device.get();
  batch.sequence_of_query_row = sequence_of_row_device.get();
  // The logit options, in device memory as the variant declared.
  if (PACHECK_HAS_FIELD(&a, pacheck_run_args, sinks)) {
    batch.soft_cap = a.soft_cap;
    batch.window = a.window;
    batch.alibi_slopes = a.alibi_slopes;
    batch.sinks = a.sinks;
  }
  const AttentionPlan plan =
      plan_attention(sequences, a.num_query_heads, a.num_kv_heads, a.tile_size, split_sizes, batch.window);
  const PlanOnDevice plan_on_device(plan, a.num_kv_heads, a.head_dim);
  launch_attention(batch, plan_on_device.view(), {}, nullptr);
  check_completion(nullptr, kernel.split_k ? "plugin_cuda_splitk" : "plugin_cuda_fused");
}

int run(void* context, const pacheck_run_args* args, char* message, size_t message_size) {
  try {
    run_kernel(*static_cast<const Kernel*>(context), *args);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(message, message_size, "%s", e.what());
    return 1;
  }
}

// The tensor cores run bf16 and fp16 at head dims that are a multiple of 8 (launch_rules.h), the CUDA cores the rest:
// per kernel, a variant for each arithmetic, each declaring its stock model. The CUDA-core variants take fp32 only,
// since an fp16 problem of such a head dim runs on the tensor cores, outside their model.
std::vector<int32_t> multiples_of_8() {
  std::vector<int32_t> dims;
  for (int d = 8; d <= kMaxHeadDim; d += 8) dims.push_back(d);
  return dims;
}
const std::vector<int32_t> kTensorCoreHeadDims = multiples_of_8();

enum class Arithmetic { cuda_cores, bf16_tensor_cores, fp16_tensor_cores };

pacheck_variant variant(const char* name, const char* description, Arithmetic arithmetic, const Kernel& kernel) {
  pacheck_variant v{};
  v.struct_size = sizeof(pacheck_variant);
  v.name = name;
  v.description = description;
  v.modes = PACHECK_MODE_DECODE | PACHECK_MODE_PREFILL | PACHECK_MODE_CONTINUATION;
  v.max_head_dim = kMaxHeadDim;
  switch (arithmetic) {
    case Arithmetic::cuda_cores:
      v.dtypes = PACHECK_DTYPE_F32;
      v.error_model = kernel.split_k ? PACHECK_ERROR_MODEL_FP32_SPLIT_K : PACHECK_ERROR_MODEL_FP32_ONLINE_SOFTMAX;
      break;
    case Arithmetic::bf16_tensor_cores:
    case Arithmetic::fp16_tensor_cores: {
      const bool bf16 = arithmetic == Arithmetic::bf16_tensor_cores;
      v.dtypes = bf16 ? PACHECK_DTYPE_BF16 : PACHECK_DTYPE_F16;
      v.error_model = bf16 ? PACHECK_ERROR_MODEL_BF16_TENSOR_CORES : PACHECK_ERROR_MODEL_FP16_TENSOR_CORES;
      v.num_head_dims = static_cast<int32_t>(kTensorCoreHeadDims.size());
      v.head_dims = kTensorCoreHeadDims.data();
      break;
    }
  }
  v.deterministic = 1;
  v.batch_invariant = 1;
  v.uses_splits = kernel.split_k ? 1 : 0;
  v.memory = PACHECK_MEMORY_DEVICE;
  v.logit_options = PACHECK_LOGIT_SOFT_CAP | PACHECK_LOGIT_WINDOW | PACHECK_LOGIT_ALIBI | PACHECK_LOGIT_SINKS;
  v.run = run;
  v.context = const_cast<Kernel*>(&kernel);
  return v;
}

const pacheck_variant kVariants[] = {
    variant("plugin_cuda_fused", "cuda_fused through the plugin ABI: fp32 on the CUDA cores", Arithmetic::cuda_cores,
            kFused),
    variant("plugin_cuda_fused_tc", "cuda_fused through the plugin ABI: bf16 on the tensor cores",
            Arithmetic::bf16_tensor_cores, kFused),
    variant("plugin_cuda_fused_tc16", "cuda_fused through the plugin ABI: fp16 on the tensor cores",
            Arithmetic::fp16_tensor_cores, kFused),
    variant("plugin_cuda_splitk", "cuda_splitk through the plugin ABI: fp32 on the CUDA cores", Arithmetic::cuda_cores,
            kSplitK),
    variant("plugin_cuda_splitk_tc", "cuda_splitk through the plugin ABI: bf16 on the tensor cores",
            Arithmetic::bf16_tensor_cores, kSplitK),
    variant("plugin_cuda_splitk_tc16", "cuda_splitk through the plugin ABI: fp16 on the tensor cores",
            Arithmetic::fp16_tensor_cores, kSplitK),
};
const pacheck_variant* const kVariantList[] = {&kVariants[0], &kVariants[1], &kVariants[2],
                                               &kVariants[3], &kVariants[4], &kVariants[5]};

}  // namespace

PACHECK_PLUGIN_EXPORT const pacheck_plugin* pacheck_plugin_entry(void) {
  static const pacheck_plugin plugin = {PACHECK_PLUGIN_ABI_VERSION, sizeof(pacheck_plugin), 6, kVariantList};
  return &plugin;
}
