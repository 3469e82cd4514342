// cuda_splitk: flash-decoding on the GPU, the twin of cpu_splitk. Each sequence's history is cut into splits of
// effective_split_size(knobs, context_len) keys (so a row's answer never depends on its batch); a thread block
// folds one split of one run of rows from an empty state and writes the partial (max, denominator, fp32
// accumulator); a reduce kernel merges each row's non-empty splits in order with the online-softmax merge.
#include "cuda/device_problem.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CudaSplitK final : public Variant {
 public:
  std::string name() const override { return "cuda_splitk"; }
  std::string description() const override {
    return "CUDA split-K (flash-decoding): per-split partial states merged by a reduce kernel, fp32";
  }
  Capabilities capabilities() const override {
    Capabilities c;
    c.dtypes = {DType::f32, DType::f16, DType::bf16};
    c.modes = {Mode::decode, Mode::prefill, Mode::continuation};
    c.max_head_dim = cuda::kMaxHeadDim;
    c.needs_gpu = true;
    c.uses_splits = true;
    return c;
  }
  Output run(const Problem& p, const Knobs& knobs) const override {
    return cuda::run_paged_attention(p, knobs, /*split_k=*/true, name());
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override {
    const RowCondition& c = oracle.rows[row];
    const int split = effective_split_size(knobs, c.context_len);
    const int records_in_split = oracle.records_in_splits(row, split);
    const int splits = (c.num_keys + split - 1) / split;
    ErrorModel m;
    m.logit_coefficient = p.head_dim + 2;
    // expf within 2 ulp (4u) each: the key's own weight, each raise of its split's running max, the factor its
    // split is merged with, and each later merge that raises the merged max. A merge raises the max only when
    // the new split holds a key above every earlier key, a record of the whole row, so at most `records` do.
    m.weight_error = 4.0 * (2 + records_in_split + c.records);
    // Within a split as cuda_fused; each merge adds a multiply and an add to every term already merged.
    m.accumulation_chain = c.num_keys + records_in_split + cuda::key_groups(p.head_dim) + 2 + 2.0 * splits;
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CudaSplitK);

}  // namespace
}  // namespace pacheck
