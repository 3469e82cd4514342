// my_cuda_attention: registers the kernel of cuda_attention.cu with pacheck as an external variant that needs a GPU
// and declares the stock fp32_online_softmax model; its run uploads a problem, launches, and downloads the output.
#include <cstdint>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda_attention.h"
#include "fp32_variant.h"

namespace {

static_assert(kMaxHeadDim >= 256, "the kernel must take every head dim fp32_online_softmax_variant declares");

pacheck::Output run(const pacheck::Problem& p, const pacheck::Knobs&) {
  std::vector<std::int32_t> tables;
  std::vector<int> row_table_offset, row_position;
  for (const pacheck::Sequence& sequence : p.sequences) {
    const int offset = static_cast<int>(tables.size());
    tables.insert(tables.end(), sequence.block_table.begin(), sequence.block_table.end());
    for (int token = 0; token < sequence.num_queries; ++token) {
      row_table_offset.push_back(offset);
      row_position.push_back(sequence.first_query_position() + token);
    }
  }
  using pacheck::cuda::DeviceBuffer;
  const DeviceBuffer<float> k_pool(p.k_pool), v_pool(p.v_pool), queries(p.queries);
  const DeviceBuffer<std::int32_t> block_tables(tables);
  const DeviceBuffer<int> table_offsets(row_table_offset), positions(row_position);
  DeviceBuffer<float> output(p.output_size());

  DeviceAttention attention;
  attention.k_pool = k_pool.get();
  attention.v_pool = v_pool.get();
  attention.queries = queries.get();
  attention.output = output.get();
  attention.block_tables = block_tables.get();
  attention.row_table_offset = table_offsets.get();
  attention.row_position = positions.get();
  attention.query_rows = p.total_queries();
  attention.query_heads = p.num_query_heads;
  attention.kv_heads = p.num_kv_heads;
  attention.head_dim = p.head_dim;
  attention.block_size = p.block_size;
  attention.scale = p.scale();
  launch_my_cuda_attention(attention);
  pacheck::cuda::check_launch("my_cuda_attention");
  pacheck::cuda::check_completion(nullptr, "my_cuda_attention");
  return output.download();
}

pacheck::ExternalVariantSpec my_cuda_attention() {
  pacheck::ExternalVariantSpec spec = fp32_online_softmax_variant(
      "my_cuda_attention", "CUDA: a warp per query row and head folds the keys one at a time, fp32 on the CUDA cores",
      run);
  spec.capabilities.needs_gpu = true;
  return spec;
}

[[maybe_unused]] const pacheck::Variant& registered = pacheck::register_external_variant(my_cuda_attention());

}  // namespace
