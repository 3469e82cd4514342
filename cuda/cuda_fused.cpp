// cuda_fused: the one-pass paged-attention kernel on the GPU (paged_attention.cu). A thread block owns one
// (sequence, KV head, run of query positions) with every query head of its GQA group, walks the whole history
// through the block table tile by tile, and folds each tile into the rows' online-softmax states.
#include "cuda/device_problem.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CudaFused final : public Variant {
 public:
  std::string name() const override { return "cuda_fused"; }
  std::string description() const override {
    return "CUDA: one block per (sequence, KV head, query run) with its GQA group, tiled online softmax, fp32";
  }
  Capabilities capabilities() const override {
    Capabilities c;
    c.dtypes = {DType::f32, DType::f16, DType::bf16};
    c.modes = {Mode::decode, Mode::prefill, Mode::continuation};
    c.max_head_dim = cuda::kMaxHeadDim;  // every head dim from 1 to 256
    c.needs_gpu = true;
    return c;
  }
  Output run(const Problem& p, const Knobs& knobs) const override {
    return cuda::run_paged_attention(p, knobs, /*split_k=*/false, name());
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs&) const override {
    const RowCondition& c = oracle.rows[row];
    ErrorModel m;
    // A head_dim-term fp32 dot product in any order is within gamma_{head_dim}, the scale multiply adds one.
    m.logit_coefficient = p.head_dim + 2;
    // CUDA's expf is within 2 ulp (4u); a key's weight is one expf, times one expf per later raise of the
    // running max (at most `records` of them in position order, whatever the tile size).
    m.weight_error = 4.0 * (1 + c.records);
    // A term of the accumulator (or of the denominator) is rounded when it joins its key group's sum and by each
    // later add there (fewer than num_keys), by each rescale (at most records), and by the adds of the key
    // groups' sums at the end (key_groups - 1).
    m.accumulation_chain = c.num_keys + c.records + cuda::key_groups(p.head_dim) + 2;
    return m;
  }
};

PACHECK_REGISTER_VARIANT(CudaFused);

}  // namespace
}  // namespace pacheck
