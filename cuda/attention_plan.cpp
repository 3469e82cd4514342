// Planning a launch: which rows and keys each thread block of the attention kernel owns.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/launch_rules.h"
#include "cuda/paged_attention.h"
#include "cuda/plan_on_device.h"
#include "variants/online_softmax.h"

namespace pacheck::cuda {

AttentionPlan plan_attention(const std::vector<SequenceMeta>& sequences, int num_query_heads, int num_kv_heads,
                             int tile_size, const std::vector<int>& split_sizes, int window) {
  if (num_kv_heads <= 0 || num_query_heads % num_kv_heads != 0)
    throw std::invalid_argument("plan_attention: the GQA ratio must be a positive integer");
  if (!split_sizes.empty() && split_sizes.size() != sequences.size())
    throw std::invalid_argument("plan_attention: one split size per sequence");
  if (window < 0) throw std::invalid_argument("plan_attention: the window must be 0 (none) or positive");
  const int gqa = num_query_heads / num_kv_heads;
  AttentionPlan plan;
  plan.row_capacity = row_capacity(gqa);
  // Whole GQA groups per block where a group fits, so each K/V tile serves every query head of the group.
  plan.rows_per_chunk = gqa <= plan.row_capacity ? plan.row_capacity / gqa * gqa : plan.row_capacity;
  plan.tile_size = std::max(1, tile_size);
  plan.split_k = !split_sizes.empty();
  if (plan.split_k) plan.split_sizes = split_sizes;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const SequenceMeta& seq = sequences[s];
    const int first_position = seq.context_len - seq.num_queries;
    const long long rows = static_cast<long long>(seq.num_queries) * gqa;
    if (plan.split_k) plan.chunk_offsets.push_back(static_cast<int>(plan.chunk_first_item.size()));
    for (long long first_row = 0; first_row < rows; first_row += plan.rows_per_chunk) {
      WorkItem item;
      item.sequence = seq;
      item.first_row = static_cast<int>(first_row);
      item.num_rows = static_cast<int>(std::min<long long>(plan.rows_per_chunk, rows - first_row));
      const int last_token = (item.first_row + item.num_rows - 1) / gqa;
      const int keys = first_position + last_token + 1;  // the chunk's last row attends to this many keys
      // The chunk's first row has the earliest window: no row of the chunk sees a key before it.
      const int first_key = window_start(first_position + item.first_row / gqa, window);
      if (!plan.split_k) {
        item.key_begin = first_key;
        item.key_end = keys;
        plan.items.push_back(item);
        continue;
      }
      const int split = split_sizes[s];
      if (split <= 0) throw std::invalid_argument("plan_attention: split sizes must be positive");
      plan.chunk_first_item.push_back(static_cast<int>(plan.items.size()));
      // Splits are cut from position 0 (as cpu_splitk's); the merge finds the chunk's first one from first_key.
      for (long long begin = first_key / split * static_cast<long long>(split); begin < keys; begin += split) {
        item.key_begin = static_cast<int>(std::max<long long>(begin, first_key));
        item.key_end = static_cast<int>(std::min<long long>(begin + split, keys));
        plan.items.push_back(item);
      }
    }
  }
  if (plan.items.size() > 0x7fffffffu) throw std::invalid_argument("plan_attention: too many work items");
  return plan;
}

PlanOnDevice::PlanOnDevice(const AttentionPlan& plan, int num_kv_heads, int head_dim)
    : items_(plan.items),
      split_sizes_(plan.split_sizes),
      chunk_offsets_(plan.chunk_offsets),
      chunk_first_item_(plan.chunk_first_item) {
  if (plan.split_k) {
    const std::size_t states = plan.items.size() * static_cast<std::size_t>(num_kv_heads) * plan.row_capacity;
    partial_max_ = DeviceBuffer<float>(states);
    partial_denominator_ = DeviceBuffer<float>(states);
    partial_acc_ = DeviceBuffer<float>(states * head_dim);
  }
  view_.row_capacity = plan.row_capacity;
  view_.rows_per_chunk = plan.rows_per_chunk;
  view_.tile_size = plan.tile_size;
  view_.split_k = plan.split_k;
  view_.num_items = static_cast<int>(plan.items.size());
  view_.items = items_.get();
  view_.split_sizes = split_sizes_.get();
  view_.chunk_offsets = chunk_offsets_.get();
  view_.chunk_first_item = chunk_first_item_.get();
  view_.partial_max = partial_max_.get();
  view_.partial_denominator = partial_denominator_.get();
  view_.partial_acc = partial_acc_.get();
}

}  // namespace pacheck::cuda
