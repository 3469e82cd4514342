// cuda_splitk: flash-decoding on the GPU, the twin of cpu_splitk. Each sequence's history is cut into splits of
// effective_split_size(knobs, context_len) keys (so a row's answer never depends on its batch); a thread block
// folds one split of one run of rows from an empty state and writes the partial (max, denominator, fp32
// accumulator); a reduce kernel merges each row's non-empty splits in order with the online-softmax merge.
#include "cuda/device_problem.h"
#include "cuda/launch_rules.h"
#include "cuda/kernel_error_model.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class CudaSplitK final : public Variant {
 public:
  std::string name() const override { return "cuda_splitk"; }
  std::string description() const override {
    return "CUDA split-K (flash-decoding): per-split partial states merged by a reduce kernel; fp32 sums, bf16 on tensor cores";
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
    return cuda::kernel_error_model(p, oracle, row, knobs, effective_split_size(knobs, oracle.rows[row].context_len));
  }
};

PACHECK_REGISTER_VARIANT(CudaSplitK);

}  // namespace
}  // namespace pacheck
