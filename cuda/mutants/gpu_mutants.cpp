// The GPU mutant table (one row per GpuBug), the launches of its pinned instantiations, and the registration of every
// row and bug-free form as a variant claiming cuda_fused's or cuda_splitk's promises on its pinned draw. Each bug is
// an `if constexpr` at its site in the kernel; GpuBug::none there is production
// (GpuMutants.BugFreeFormsAreBitIdenticalToProduction). Every bug stays in bounds and finite in time, so one process
// runs the whole matrix (a sticky CUDA error would end it).
#include "cuda/mutants/gpu_mutants.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/device_problem.h"
#include "cuda/kernel_instances.h"
#include "cuda/launch_rules.h"
#include "variants/variant.h"

namespace pacheck::cuda::mutants {
namespace {

constexpr GpuMutantSpec kCatalogue[] = {
    {"cp_async_wait_one_late", GpuKernel::cuda_core, false, GpuBug::cp_async_wait_one_late,
     "cp.async.wait_group STAGES - 1 where STAGES - 2 lands the tile: its rows are read before they arrive",
     "asynchronous-copy pipeline waited one stage too late (wait_group count off by one)"},
    {"tc_cp_async_wait_one_late", GpuKernel::tensor_core, false, GpuBug::tc_cp_async_wait_one_late,
     "tensor cores: cp.async.wait_group STAGES where STAGES - 1 lands the tile",
     "asynchronous-copy pipeline waited one stage too late (wait_group count off by one)"},
    {"tile_max_barrier_missing", GpuKernel::cuda_core, false, GpuBug::tile_max_barrier_missing,
     "no __syncthreads between the key groups' tile maxima in shared memory and their reads",
     "missing block barrier before a shared-memory stage is read"},
    {"butterfly_width_too_narrow", GpuKernel::cuda_core, false, GpuBug::butterfly_width_too_narrow,
     "the dot-product butterfly's shuffles pass width = xor distance: half the lanes add their own value",
     "wrong shuffle width in a warp reduction"},
    {"tc_warp_max_missing_step", GpuKernel::tensor_core, false, GpuBug::tc_warp_max_missing_step,
     "tensor cores: the row's warp max leaves out the xor-16 shuffle, so half-warps disagree on the max",
     "missing step (wrong mask) in a warp shuffle reduction"},
    {"swizzle_xor_of_4_rows", GpuKernel::tensor_core, false, GpuBug::swizzle_xor_of_4_rows,
     "tensor cores: ldmatrix rows unswizzled with key % 4 where the copies swizzled with key % 8",
     "a swizzle that sends one lane group to the wrong bank row"},
    {"tma_box_one_row_late", GpuKernel::tensor_core, false, GpuBug::tma_box_one_row_late,
     "tensor cores: each tensor copy's 16-row box starts one slot late, its last row in the next page",
     "a tensor-copy (TMA) box that runs past a page (coordinates off by one row)"},
    {"mbarrier_parity_flipped", GpuKernel::tensor_core, false, GpuBug::mbarrier_parity_flipped,
     "tensor cores: the tile's mbarrier is waited on with the other phase parity, returning before the copy lands",
     "an mbarrier waited on with the wrong phase parity"},
    {"fp8_k_scale_from_v_scales", GpuKernel::tensor_core_fp8, false, GpuBug::fp8_k_scale_from_v_scales,
     "tensor cores, fp8 cache: each logit is multiplied by the KV head's V scale instead of its K scale",
     "a dequantisation scale applied to the wrong tensor"},
    {"fp16_scores_row_of_fragment", GpuKernel::tensor_core_fp8, false, GpuBug::fp16_scores_row_of_fragment,
     "tensor cores, e4m3 cache: a score's power of two is undone with the query fragment's row, not the score's",
     "a per-row factor indexed by an mma operand's fragment layout instead of the accumulator's"},
    {"merge_slot_by_row_capacity", GpuKernel::merge, true, GpuBug::merge_slot_by_row_capacity,
     "the merge indexes a row's slot by the block's capacity, not the rows it holds: unwritten slots at GQA 3",
     "a split-K workspace slot read that the current launch did not write"},
    {"merge_reads_one_split_past", GpuKernel::merge, true, GpuBug::merge_reads_one_split_past,
     "the merge takes one split past the row's last: another row's partial state",
     "a split-K workspace slot read that the current launch did not write (index off by one split)"},
    {"merge_order_from_arrival", GpuKernel::merge, true, GpuBug::merge_order_from_arrival,
     "the merge starts each row at the split its atomic arrival ticket names and wraps around",
     "a reduction whose order depends on arrival (atomics), which breaks determinism"},
    {"p_rounded_to_bf16", GpuKernel::cuda_core, false, GpuBug::p_rounded_to_bf16,
     "each softmax weight is rounded to bf16 before it multiplies V: 8 bits where the model declares 24",
     "a probability fragment kept in lower precision than the error model declares"},
    {"split_start_rounded_up", GpuKernel::cuda_core, true, GpuBug::split_start_rounded_up,
     "a split starts at its first whole KV block: the keys before it fold into no split",
     "a work item that skips a key range at a grid boundary (a split's start off by one block)"},
};

constexpr GpuMutantSpec kBugFree[] = {
    {"none_cuda_core", GpuKernel::cuda_core, false, GpuBug::none, "no bug: the CUDA-core kernel's pinned draw",
     "none"},
    {"none_tensor_core", GpuKernel::tensor_core, false, GpuBug::none, "no bug: the tensor-core kernel's pinned draw",
     "none"},
    {"none_tensor_core_fp8", GpuKernel::tensor_core_fp8, false, GpuBug::none,
     "no bug: the tensor-core kernel's pinned draw, e4m3 caches among them", "none"},
    {"none_merge", GpuKernel::merge, true, GpuBug::none, "no bug: the split-K merge's pinned draw", "none"},
};

// The draw each kernel's instantiation serves, checked before any launch (a case file can hold any shape).
void check_draw(GpuKernel kernel, const DeviceBatch& batch, const DevicePlan& plan) {
  const bool fp8 = kernel == GpuKernel::tensor_core_fp8;
  const bool tensor = kernel == GpuKernel::tensor_core || fp8;
  const bool cache_ok = batch.kv_cache == KvCache::same ||
                        (fp8 && batch.kv_cache == KvCache::e4m3 && batch.head_dim % kFp8HeadDimMultiple == 0);
  const bool ok = plan.row_capacity == 4 && cache_ok &&
                  (tensor ? batch.storage == Storage::bf16 && uses_tensor_cores(batch.storage, batch.head_dim) &&
                                lanes_for(batch.head_dim) == 64
                          : batch.storage == Storage::f32 && lanes_for(batch.head_dim) == 32);
  if (!ok)
    throw std::invalid_argument(
        std::string("the GPU mutants of the ") + std::string(kernel_name(kernel)) + " kernel take only " +
        (tensor ? "bf16 with head dims 40 to 64 (multiples of 8)" : "fp32 with head dims up to 32") +
        (fp8 ? ", e4m3 caches with head dims 48 and 64," : "") + " and GQA ratios 1 to 4");
}

// Enqueues the mutant's pinned attention instantiation, then for split-K the merge, BUG in the one that is KERNEL.
template <GpuKernel KERNEL, GpuBug BUG>
void launch_mutant(const DeviceBatch& batch, const DevicePlan& plan, const KernelPins&, cudaStream_t stream) {
  check_draw(KERNEL, batch, plan);
  constexpr GpuBug kAttentionBug = KERNEL == GpuKernel::merge ? GpuBug::none : BUG;
  if constexpr (KERNEL == GpuKernel::tensor_core_fp8) {
    // The bugs' sites read an fp8 cache alone: a bf16 cache takes production's instance.
    if (batch.kv_cache == KvCache::e4m3)
      instances::launch_tensor_core<Storage::bf16, 64, 4, KernelLayout::automatic, BUG, KvCache::e4m3>(batch, plan,
                                                                                                       stream);
    else
      instances::launch_tensor_core<Storage::bf16, 64, 4, KernelLayout::automatic>(batch, plan, stream);
  } else if constexpr (KERNEL == GpuKernel::tensor_core)
    instances::launch_tensor_core<Storage::bf16, 64, 4, KernelLayout::automatic, kAttentionBug>(batch, plan, stream);
  else
    instances::launch_cuda_core<Storage::f32, 32, 4, kAttentionBug>(batch, plan, stream);
  // At 32 lanes the merge's two shapes are one instantiation (a lane a thread).
  if (plan.split_k)
    instances::launch_merge<Storage::f32, 32, MergeShape::lanes, KERNEL == GpuKernel::merge ? BUG : GpuBug::none>(
        batch, plan, stream);
}

// Only none and the bugs of KERNEL's rows are instantiated for KERNEL (cuda/mutants/*.cu), so a row naming another
// kernel than its bug's site fails to link.
constexpr bool has_site(GpuKernel kernel, GpuBug bug) {
  for (const GpuMutantSpec& spec : kCatalogue)
    if (spec.bug == bug && spec.kernel == kernel) return true;
  return bug == GpuBug::none;
}

template <GpuKernel KERNEL, GpuBug BUG>
constexpr LaunchAttention launcher_if_sited() {
  if constexpr (has_site(KERNEL, BUG)) return &launch_mutant<KERNEL, BUG>;
  else return nullptr;
}

template <GpuKernel KERNEL, int... BUGS>
LaunchAttention launcher_of(GpuBug bug, std::integer_sequence<int, BUGS...>) {
  LaunchAttention found = nullptr;
  ((static_cast<int>(bug) == BUGS ? (found = launcher_if_sited<KERNEL, static_cast<GpuBug>(BUGS)>()) : found), ...);
  return found;
}

LaunchAttention launcher_for(const GpuMutantSpec& spec) {
  constexpr auto bugs = std::make_integer_sequence<int, static_cast<int>(GpuBug::count)>{};
  switch (spec.kernel) {
    case GpuKernel::cuda_core: return launcher_of<GpuKernel::cuda_core>(spec.bug, bugs);
    case GpuKernel::tensor_core: return launcher_of<GpuKernel::tensor_core>(spec.bug, bugs);
    case GpuKernel::tensor_core_fp8: return launcher_of<GpuKernel::tensor_core_fp8>(spec.bug, bugs);
    case GpuKernel::merge: return launcher_of<GpuKernel::merge>(spec.bug, bugs);
  }
  return nullptr;
}

// A GPU mutant, or a bug-free form: cuda_fused's or cuda_splitk's capabilities narrowed to the kernel's pinned draw,
// and its error model.
class GpuMutant final : public Variant {
 public:
  explicit GpuMutant(const GpuMutantSpec& spec) : spec_(spec), launch_(launcher_for(spec)) {}
  std::string name() const override { return "gpu_mutant_" + std::string(spec_.name); }
  std::string description() const override {
    return counterpart().name() + " with one GPU bug: " + std::string(spec_.bug_description);
  }
  Capabilities capabilities() const override {
    Capabilities c = counterpart().capabilities();
    c.is_mutant = true;
    c.gqa_ratios = {1, 2, 3, 4};  // 4 rows a block
    // Only the fp8 kind reads an fp8 cache: e4m3 (bf16 queries, head dims a multiple of 16).
    c.fp8_caches = spec_.kernel == GpuKernel::tensor_core_fp8 ? std::vector<Fp8Format>{Fp8Format::e4m3}
                                                               : std::vector<Fp8Format>{};
    if (spec_.kernel == GpuKernel::tensor_core || spec_.kernel == GpuKernel::tensor_core_fp8) {
      c.dtypes = {DType::bf16};
      c.max_head_dim = 64;
      c.supports_head_dim = [](int d) { return d > 32 && d % 8 == 0; };
      c.block_sizes = {16, 32, 48, 64};
    } else {
      c.dtypes = {DType::f32};
      c.max_head_dim = 32;
      c.supports_head_dim = [](int d) { return d % 4 == 0; };  // whole 16-byte rows: the asynchronous copies
    }
    return c;
  }
  Output run(const Problem& problem, const Knobs& knobs) const override {
    return run_paged_attention(problem, knobs, spec_.split_k, name(), launch_);
  }
  ErrorModel error_model(const Problem& problem, const OracleResult& oracle, std::size_t row,
                         const Knobs& knobs) const override {
    return counterpart().error_model(problem, oracle, row, knobs);
  }

 private:
  const Variant& counterpart() const {
    return Registry::instance().get(spec_.split_k ? "cuda_splitk" : "cuda_fused");
  }
  GpuMutantSpec spec_;
  LaunchAttention launch_;
};

[[maybe_unused]] const bool kRegistered = [] {
  for (const GpuMutantSpec& spec : kCatalogue) Registry::instance().add(std::make_unique<GpuMutant>(spec));
  for (const GpuMutantSpec& spec : kBugFree) Registry::instance().add(std::make_unique<GpuMutant>(spec));
  return true;
}();

}  // namespace

std::span<const GpuMutantSpec> gpu_mutant_catalogue() { return kCatalogue; }
std::span<const GpuMutantSpec> gpu_mutant_bug_free_forms() { return kBugFree; }

std::string_view kernel_name(GpuKernel kernel) {
  switch (kernel) {
    case GpuKernel::cuda_core: return "cuda_core";
    case GpuKernel::tensor_core: return "tensor_core";
    case GpuKernel::tensor_core_fp8: return "tensor_core_fp8";
    case GpuKernel::merge: return "merge";
  }
  return "unknown";
}

}  // namespace pacheck::cuda::mutants
