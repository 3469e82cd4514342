// The CUDA variants cuda_fused and cuda_splitk: the kernels of launch_attention.cpp behind the Variant interface,
// with the error model of the arithmetic launch_rules.h gives each problem.
#include <algorithm>

#include "cuda/device_problem.h"
#include "cuda/launch_rules.h"
#include "oracle/stock_error_models.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

// The tiled-kernel model (oracle/stock_error_models.h) of the arithmetic the problem runs on, read from the
// dispatch's rule so that bound and kernel cannot disagree. split_size: 0 when fused.
ErrorModel kernel_error_model(const Problem& p, const OracleResult& oracle, std::size_t row, const Knobs& knobs,
                              int split_size) {
  const cuda::KernelArithmetic kernel =
      cuda::kernel_arithmetic(cuda::storage_of(p.dtype), p.head_dim, cuda::kv_cache_of(p));
  TiledKernelShape shape;
  shape.tensor_cores = kernel.tensor_cores;
  shape.fp16_operands = kernel.fp16_operands;
  shape.tile_keys = std::max(1, std::min(knobs.tile_size, kernel.max_tile_keys));
  shape.key_groups = kernel.key_groups;
  return tiled_kernel_error_model(p, oracle, row, shape, split_size);
}

Capabilities cuda_capabilities(bool uses_splits) {
  Capabilities c;
  c.dtypes = {DType::f32, DType::f16, DType::bf16};
  c.modes = {Mode::decode, Mode::prefill, Mode::continuation};
  c.max_head_dim = cuda::kMaxHeadDim;
  c.needs_gpu = true;
  c.uses_splits = uses_splits;
  // Every logit option, in fp32 as the CPU variants (the tiled model's fp32 option cost and sink term cover them).
  c.logit_options = LogitOptionSupport::all();
  // fp8 caches on the tensor cores only: bf16 queries, head dims a multiple of 16 (launch_rules.h).
  c.fp8_caches = {Fp8Format::e4m3, Fp8Format::e5m2};
  c.fp8_query_dtypes = {DType::bf16};
  c.fp8_head_dim_multiple = cuda::kFp8HeadDimMultiple;
  return c;
}

// cuda_fused and cuda_splitk (paged_attention.h). cuda_splitk is the twin of cpu_splitk: splits of
// effective_split_size(knobs, context_len) keys, so a row's answer never depends on its batch.
template <bool SPLIT_K>
class CudaVariant final : public Variant {
 public:
  std::string name() const override { return SPLIT_K ? "cuda_splitk" : "cuda_fused"; }
  std::string description() const override {
    return std::string(SPLIT_K ? "CUDA split-K (flash-decoding): per-split partial states merged by a reduce kernel"
                               : "CUDA: one block per (sequence, KV head, query run) with its GQA group, tiled online "
                                 "softmax") +
           "; fp32 sums, bf16 and fp16 on tensor cores, fp8 caches (bf16 queries) widened exactly";
  }
  Capabilities capabilities() const override { return cuda_capabilities(SPLIT_K); }
  Output run(const Problem& p, const Knobs& knobs) const override {
    return cuda::run_paged_attention(p, knobs, SPLIT_K, name());
  }
  ErrorModel error_model(const Problem& p, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override {
    return kernel_error_model(p, oracle, row, knobs,
                              SPLIT_K ? effective_split_size(knobs, oracle.rows[row].context_len) : 0);
  }
};

PACHECK_REGISTER_VARIANT(CudaVariant<false>);
PACHECK_REGISTER_VARIANT(CudaVariant<true>);

}  // namespace
}  // namespace pacheck
