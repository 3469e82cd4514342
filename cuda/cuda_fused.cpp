// cuda_fused: the one-pass paged-attention kernel on the GPU (paged_attention.cu). A thread block owns one
// (sequence, KV head, run of query positions) with every query head of its GQA group, walks the whole history
// through the block table tile by tile, and folds each tile into the rows' online-softmax states.
#include "cuda/device_problem.h"
#include "cuda/launch_rules.h"
#include "cuda/kernel_error_model.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CudaFused final : public Variant {
 public:
  std::string name() const override { return "cuda_fused"; }
  std::string description() const override {
    return "CUDA: one block per (sequence, KV head, query run) with its GQA group, tiled online softmax; fp32 sums, bf16 on tensor cores";
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
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override {
    return cuda::kernel_error_model(p, oracle, row, knobs, 0);
  }
};

PACHECK_REGISTER_VARIANT(CudaFused);

}  // namespace
}  // namespace pacheck
