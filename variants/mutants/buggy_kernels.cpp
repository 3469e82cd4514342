// The mutants' meta-kernel (buggy_kernels.h): device memory as a GPU reads it, and the kernels with their bugs.
#include "variants/mutants/buggy_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "variants/cpu_grid.h"

namespace pacheck::mutants {

// Device memory.

DeviceMemory::DeviceMemory(const Problem& problem) : problem_(problem) {
  for (const Sequence& s : problem.sequences) row_width_ = std::max(row_width_, static_cast<int>(s.block_table.size()));
  table_.assign(problem.sequences.size() * static_cast<std::size_t>(row_width_), 0);  // vLLM pads rows with 0
  for (std::size_t s = 0; s < problem.sequences.size(); ++s)
    std::copy(problem.sequences[s].block_table.begin(), problem.sequences[s].block_table.end(),
              table_.begin() + static_cast<std::ptrdiff_t>(s * row_width_));
}

std::int32_t DeviceMemory::table_entry(int sequence, int index) const {
  const std::int64_t flat = static_cast<std::int64_t>(sequence) * row_width_ + index;
  if (index < 0 || flat >= static_cast<std::int64_t>(table_.size()))
    throw std::runtime_error("illegal address: block table entry " + std::to_string(index) + " of sequence " +
                             std::to_string(sequence) + " lies outside the table (" +
                             std::to_string(problem_.sequences.size()) + " rows of " + std::to_string(row_width_) +
                             " entries)");
  return table_[flat];
}

std::size_t DeviceMemory::vector_offset(std::int64_t block, int slot, int kv_head) const {
  const Problem& p = problem_;
  const std::int64_t offset = ((block * p.block_size + slot) * p.num_kv_heads + kv_head) * p.head_dim;
  if (block < 0 || block > std::numeric_limits<std::int32_t>::max() || offset < 0 ||
      offset + p.head_dim > static_cast<std::int64_t>(p.pool_size()))
    throw std::runtime_error("illegal address: block id " + std::to_string(block) + " slot " + std::to_string(slot) +
                             " kv head " + std::to_string(kv_head) + " lies outside the pool of " +
                             std::to_string(p.num_blocks) + " blocks");
  return static_cast<std::size_t>(offset);
}

const float* DeviceMemory::key_at(std::int64_t block, int slot, int kv_head) const {
  return &problem_.k_pool[vector_offset(block, slot, kv_head)];
}

const float* DeviceMemory::value_at(std::int64_t block, int slot, int kv_head) const {
  return &problem_.v_pool[vector_offset(block, slot, kv_head)];
}

// The arithmetic.

float approximate_expf(float x) {
  if (std::isnan(x)) return x;
  const float y = x * 1.44269504f;  // log2(e)
  if (y < -150.0f) return 0.0f;
  if (y >= 128.0f) return INFINITY;
  const float whole = std::floor(y);
  const float f = y - whole;
  // The near-minimax quadratic for 2^f on [0, 1): relative error up to 1.7e-3 (a cubic would give ~1e-4).
  const float two_to_f = 1.00172511f + f * (0.657632166f + f * 0.337193076f);
  return std::ldexp(two_to_f, static_cast<int>(whole));
}

namespace {

const float kZeroRow[kCpuMaxHeadDim] = {};

float exp_of(float x, Bug bug) { return bug == Bug::approximate_exp ? approximate_expf(x) : expf(x); }

// rescale_factor of online_softmax.h.
float rescale_factor_of(float m_old, float m_new, Bug bug) {
  return m_old == -INFINITY ? 0.0f : exp_of(m_old - m_new, bug);
}

// The accumulator as stored: fp32, or bf16 under pv_accumulated_in_bf16.
float stored_accumulator(float x, Bug bug) {
  return bug == Bug::pv_accumulated_in_bf16 ? round_to_dtype_f(x, DType::bf16) : x;
}

void init_state(CpuSoftmaxState& state, int n, Bug bug) {
  state.init(n);
  if (bug == Bug::max_initialised_to_zero) state.m = 0.0f;
}

// OnlineSoftmaxState::fold, with the bug switches.
template <typename ValueRow>
void fold(CpuSoftmaxState& st, const float* scores, int count, ValueRow value_row, int n, Bug bug) {
  float tile_max = -INFINITY;
  for (int t = 0; t < count; ++t) tile_max = fmaxf(tile_max, scores[t]);
  if (tile_max == -INFINITY) return;
  const float m_new = fmaxf(st.m, tile_max);
  const float alpha = rescale_factor_of(st.m, m_new, bug);
  if (bug != Bug::denominator_not_rescaled) st.d *= alpha;
  if (bug != Bug::accumulator_not_rescaled)
    for (int j = 0; j < n; ++j) st.o[j] = stored_accumulator(st.o[j] * alpha, bug);
  st.m = m_new;
  for (int t = 0; t < count; ++t) {
    if (scores[t] == -INFINITY && bug != Bug::masked_value_not_zeroed) continue;
    const float p = exp_of(scores[t] - st.m, bug);
    st.d += p;
    const float* v = value_row(t);
    for (int j = 0; j < n; ++j) st.o[j] = stored_accumulator(st.o[j] + p * v[j], bug);
  }
}

// OnlineSoftmaxState::merge, with the bug switches.
void merge(CpuSoftmaxState& st, const CpuSoftmaxState& other, int n, Bug bug) {
  if (other.m == -INFINITY) return;
  const float m_new = fmaxf(st.m, other.m);
  float self_factor = rescale_factor_of(st.m, m_new, bug);
  float other_factor = rescale_factor_of(other.m, m_new, bug);
  if (bug == Bug::reduce_ignores_split_max) self_factor = other_factor = 1.0f;
  st.d = st.d * self_factor + other.d * other_factor;
  for (int j = 0; j < n; ++j) st.o[j] = st.o[j] * self_factor + other.o[j] * other_factor;
  st.m = m_new;
}

// tanh(x) as 2 sigmoid(2x) - 1: near x = 0 the sum 1 + exp(-2x) keeps few of x's bits (relative error ~ u / |x|).
float tanh_from_sigmoid(float x) { return 2.0f / (1.0f + expf(-2.0f * x)) - 1.0f; }

// logit_fp32 of cpu_grid.h, with the bug switches.
float logit(const Problem& p, const RowProgram& row, const float* q, const float* k, int key, Bug bug) {
  const LogitOptions& o = p.options;
  const float scale = p.scale();
  const bool scale_after_cap = bug == Bug::soft_cap_before_scale && o.soft_cap;
  float s = score_fp32(q, k, p.head_dim, bug == Bug::scale_not_applied || scale_after_cap ? 1.0f : scale);
  if (bug == Bug::scale_applied_twice) s *= scale;
  if (o.soft_cap) {
    const float cap = *o.soft_cap;
    s = cap * (bug == Bug::soft_cap_tanh_from_sigmoid ? tanh_from_sigmoid(s / cap) : tanhf(s / cap));
  }
  if (scale_after_cap) s *= scale;
  if (!o.alibi_slopes.empty()) {
    const int head = bug == Bug::alibi_slope_of_kv_head ? row.kv_head : row.query_head;
    const int distance = bug == Bug::alibi_sign_flipped ? row.position - key : key - row.position;
    s += o.alibi_slopes[head] * static_cast<float>(distance);
  }
  return s;
}

int kv_head_of(const Problem& p, int query_head, Bug bug) {
  if (bug == Bug::gqa_head_modulo) return query_head % p.num_kv_heads;
  if (bug == Bug::gqa_head_shift) {
    int log2_ratio = 0;
    while ((2 << log2_ratio) <= p.gqa_ratio()) ++log2_ratio;
    return query_head >> log2_ratio;
  }
  return p.kv_head_of(query_head);
}

// Where the kernel looks for key (and value) `position` of the row's sequence.
struct SlotAddress {
  std::int64_t block = 0;
  int slot = 0;
};

SlotAddress address_of(const Problem& p, const DeviceMemory& memory, const RowProgram& row, int position, Bug bug) {
  const int logical_block = position / p.block_size;
  const int slot = position % p.block_size;
  // paired_block_load: an odd logical block is taken to sit right after its even partner in the pool.
  if (bug == Bug::paired_block_load && logical_block % 2 == 1)
    return {std::int64_t{memory.table_entry(row.sequence, logical_block - 1)} + 1, slot};
  return {memory.table_entry(row.sequence, logical_block), slot};
}

// cpu_grid.h's `dequantised`, with fp8_format_swapped (the scale is the caller's); a plain pool's vector as is.
const float* dequantise(const Problem& p, const float* loaded, float scale, int head_dim, float* out, Bug bug) {
  if (!p.fp8_cache) return loaded;
  const Fp8Format format = p.fp8_cache->format;
  const Fp8Format other = format == Fp8Format::e4m3 ? Fp8Format::e5m2 : Fp8Format::e4m3;
  for (int i = 0; i < head_dim; ++i) {
    const float x = bug == Bug::fp8_format_swapped ? from_fp8_bits(to_fp8_bits(loaded[i], format), other) : loaded[i];
    out[i] = x * scale;
  }
  return out;
}

// The loads, each into its own buffer, valid until the next load of its kind.
const float* load_key(const Problem& p, const DeviceMemory& memory, const RowProgram& row, int position, Bug bug) {
  thread_local float buffer[kCpuMaxHeadDim];
  const SlotAddress a = address_of(p, memory, row, position, bug);
  const std::optional<Fp8Cache>& fp8 = p.fp8_cache;
  const float scale = !fp8 ? 1.0f
                      : bug == Bug::fp8_k_scaled_by_v_scale ? fp8->v_scale(row.kv_head)
                                                            : fp8->k_scale(row.kv_head);
  return dequantise(p, memory.key_at(a.block, a.slot, row.kv_head), scale, p.head_dim, buffer, bug);
}

const float* load_value(const Problem& p, const DeviceMemory& memory, const RowProgram& row, int position, Bug bug) {
  thread_local float buffer[kCpuMaxHeadDim];
  const SlotAddress a = address_of(p, memory, row, position, bug);
  const float scale = p.fp8_cache ? p.fp8_cache->v_scale(row.kv_head) : 1.0f;
  return dequantise(p, memory.value_at(a.block, a.slot, row.kv_head), scale, p.head_dim, buffer, bug);
}

// fp16's range: a common finite "large negative", which wins over a row whose every logit lies below it.
constexpr float kFiniteSentinel = -6e4f;

// The score of a masked lane: -inf, or the bug's fill value.
float masked_score(Bug bug) {
  if (bug == Bug::masked_score_zero) return 0.0f;
  if (bug == Bug::masked_score_sentinel) return kFiniteSentinel;
  return -INFINITY;
}

// fold_sink of cpu_grid.h, with the bug switches.
void fold_sink(const Problem& p, const RowProgram& row, Bug bug, CpuSoftmaxState& st) {
  float sink = p.sink(row.query_head);
  if (bug == Bug::sink_sentinel && !p.options.sinks.empty() && sink == -INFINITY) sink = kFiniteSentinel;
  if (bug == Bug::sink_not_in_denominator) {
    // The state starts from m = sink, d = 0 where d = exp(sink - sink) = 1 was meant.
    st.m = fmaxf(st.m, sink);
    return;
  }
  fold(st, &sink, 1, [](int) { return kZeroRow; }, p.head_dim, bug);
}

// Whether the row's tail block is within another sequence's context too: forks sharing a tail.
bool tail_block_shared(const Problem& p, const RowProgram& row) {
  const int tail = p.sequences[row.sequence].block_table[(row.context_len - 1) / p.block_size];
  for (int s = 0; s < static_cast<int>(p.sequences.size()); ++s) {
    if (s == row.sequence) continue;
    const Sequence& other = p.sequences[s];
    const int blocks = (other.context_len + p.block_size - 1) / p.block_size;
    for (int b = 0; b < blocks; ++b)
      if (other.block_table[b] == tail) return true;
  }
  return false;
}

// The keys a row's masks let through, as the kernel computes them.
struct KeyWindow {
  int first = 0;         // the sliding window's start: the kernel walks the keys from here
  int kv_bound = 0;      // the ragged tail: keys at or past it are not loaded
  bool causal = false;   // whether the causal mask is applied at all
  int causal_limit = 0;  // keys past it are the query's future

  int end() const { return causal ? std::min(kv_bound, causal_limit + 1) : kv_bound; }
};

KeyWindow key_window(const Problem& p, const RowProgram& row, Bug bug) {
  KeyWindow w;
  w.first = row.first_key;
  if (bug == Bug::window_one_too_many && w.first > 0) w.first -= 1;
  w.kv_bound = row.context_len;
  if (bug == Bug::tail_one_too_many) w.kv_bound += 1;
  if (bug == Bug::tail_one_too_few) w.kv_bound -= 1;
  if (bug == Bug::shared_tail_read_whole && tail_block_shared(p, row))
    w.kv_bound = (row.context_len + p.block_size - 1) / p.block_size * p.block_size;
  // Decode kernels (vLLM's paged decode, FlashAttention with seqlen_q = 1) apply no causal mask: the tail mask
  // stops at the position. For Bug::none the keys are [first_key, position].
  w.causal = p.sequences[row.sequence].num_queries > 1;
  w.causal_limit = row.position;
  if (bug == Bug::causal_off_by_one) w.causal_limit = row.position + 1;
  if (bug == Bug::causal_top_left) w.causal_limit = row.token;
  return w;
}

// fold_key_range of cpu_grid.h, with the bug switches: folds keys [begin, end) of the row, a tile at a time.
void fold_keys(const Problem& p, const DeviceMemory& memory, const RowProgram& row, const KeyWindow& window,
               int begin, int end, int tile_size, Bug bug, CpuSoftmaxState& st) {
  const float* q = &p.queries[row.offset];
  float scores[kCpuMaxHeadDim];
  const int step = std::min(tile_size, kCpuMaxHeadDim);
  const int tiles_end = bug == Bug::last_partial_tile_skipped ? begin + (end - begin) / step * step : end;
  for (int tile = begin; tile < tiles_end; tile += step) {
    // The pipelined loop loads the next tile's block id (and first key) while this tile computes.
    if (bug == Bug::table_prefetch_past_row) (void)load_key(p, memory, row, tile + step, bug);
    for (int lane = 0; lane < step; ++lane) {
      const int t = tile + lane;
      const bool loaded = t < window.kv_bound;
      const float s = logit(p, row, q, loaded ? load_key(p, memory, row, t, bug) : kZeroRow, t, bug);
      const bool visible = loaded && !(window.causal && t > window.causal_limit) && t < end;
      scores[lane] = visible ? s : masked_score(bug);
    }
    const auto value_row = [&](int lane) -> const float* {
      const int t = tile + lane;
      if (bug == Bug::masked_value_not_zeroed || t < window.kv_bound)
        return load_value(p, memory, row, t, bug);
      return kZeroRow;
    };
    fold(st, scores, step, value_row, p.head_dim, bug);
  }
}

// A row program with the kernel's (possibly wrong) KV head.
RowProgram with_kv_head(const Problem& p, const RowProgram& program, Bug bug) {
  RowProgram row = program;
  row.kv_head = kv_head_of(p, row.query_head, bug);
  return row;
}

// vLLM's launch heuristic in miniature: split only a (sequence, head) grid too small to fill the machine.
constexpr int kGridThatFillsTheMachine = 4;

int split_size_of(const Problem& p, const Knobs& knobs, const RowProgram& row, Bug bug) {
  const int grid = static_cast<int>(p.sequences.size()) * p.num_query_heads;
  if (bug == Bug::splits_from_batch_size && grid >= kGridThatFillsTheMachine) return std::max(1, row.context_len);
  return effective_split_size(knobs, row.context_len);
}

}  // namespace

// The kernels.

const char* counterpart_name(Kernel kernel) { return kernel == Kernel::streaming ? "cpu_streaming" : "cpu_splitk"; }

Output run_streaming(const Problem& p, const Knobs& knobs, Bug bug) {
  const DeviceMemory memory(p);
  Output out(p.output_size());
  for_each_row(p, [&](const RowProgram& program) {
    const RowProgram row = with_kv_head(p, program, bug);
    const KeyWindow window = key_window(p, row, bug);
    CpuSoftmaxState state;
    init_state(state, p.head_dim, bug);
    fold_sink(p, row, bug, state);
    fold_keys(p, memory, row, window, window.first, window.end(), knobs.tile_size, bug, state);
    store_output(p, row, state, out.data());
  });
  return out;
}

Output run_splitk(const Problem& p, const Knobs& knobs, Bug bug, unsigned launch) {
  const DeviceMemory memory(p);
  Output out(p.output_size());
  std::vector<CpuSoftmaxState> partials;
  for_each_row(p, [&](const RowProgram& program) {
    const RowProgram row = with_kv_head(p, program, bug);
    const KeyWindow window = key_window(p, row, bug);
    const int keys = window.end();
    const int split = split_size_of(p, knobs, row, bug);
    // The splits holding a key the row sees: from its window's start to key keys - 1.
    const int first_split = window.first / split;
    const int used_splits = keys <= window.first ? 0 : (keys - 1) / split + 1 - first_split;
    const int overlap = bug == Bug::split_boundary_key_twice ? 1 : 0;
    partials.resize(used_splits);
    for (int i = 0; i < used_splits; ++i) {
      const int begin = (first_split + i) * split;
      init_state(partials[i], p.head_dim, bug);
      if (bug == Bug::sink_per_split) fold_sink(p, row, bug, partials[i]);
      fold_keys(p, memory, row, window, std::max(begin, window.first), std::min(begin + split + overlap, keys),
                knobs.tile_size, bug, partials[i]);
    }
    // The reduce starts from the sink, so it joins the row once.
    CpuSoftmaxState merged;
    merged.init(p.head_dim);
    if (bug != Bug::sink_per_split) fold_sink(p, row, bug, merged);
    const int merged_splits = bug == Bug::reduce_drops_last_split && used_splits > 1 ? used_splits - 1 : used_splits;
    for (int k = 0; k < merged_splits; ++k) {
      const int i = bug == Bug::reduce_order_from_arrival ? static_cast<int>((k + launch) % used_splits) : k;
      merge(merged, partials[i], p.head_dim, bug);
    }
    store_output(p, row, merged, out.data());
  });
  return out;
}

Output run_kernel(Kernel kernel, const Problem& problem, const Knobs& knobs, Bug bug, unsigned launch) {
  return kernel == Kernel::streaming ? run_streaming(problem, knobs, bug) : run_splitk(problem, knobs, bug, launch);
}

}  // namespace pacheck::mutants
