// The GPU mutant table, the launches of its pinned instantiations, and the registration of every row (and of the
// bug-free forms) as a variant that claims cuda_fused's or cuda_splitk's promises on its pinned draw.
//
// A row is a name, the kernel it breaks, whether it runs split-K, its GpuBug, what the bug does and the real GPU
// mistake it stands for. The bug itself is an `if constexpr` at its site in the kernel (cuda_core_kernel.cuh,
// tensor_core_kernel.cuh, splitk_merge.cuh); with GpuBug::none those are the production instantiations, which
// GpuMutants.BugFreeFormsAreBitIdenticalToProduction (tests/cuda/mutants/gpu_mutants_test.cpp) holds the mutants'
// launch path to. Every bug here leaves the kernel in bounds and finite in time (no fault, no hang), so that one
// process runs the whole matrix: a sticky CUDA error would end every later run.
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
    // The multistage cp.async loop waits with wait_group(STAGES - 1) as if it had committed the next tile's group
    // already; this loop commits it after the wait, so tile i is read while its copies are still landing.
    {"cp_async_wait_one_late", GpuKernel::cuda_core, false, GpuBug::cp_async_wait_one_late,
     "cp.async.wait_group STAGES - 1 where STAGES - 2 lands the tile: its rows are read before they arrive",
     "asynchronous-copy pipeline waited one stage too late (wait_group count off by one)"},
    // The same count off by one in the tensor-core kernel, whose refill commits after the fold.
    {"tc_cp_async_wait_one_late", GpuKernel::tensor_core, false, GpuBug::tc_cp_async_wait_one_late,
     "tensor cores: cp.async.wait_group STAGES where STAGES - 1 lands the tile",
     "asynchronous-copy pipeline waited one stage too late (wait_group count off by one)"},
    // The per-tile barrier between the key groups' stores of their maxima and every thread's reads of them
    // dropped as "only a max": key groups read each other's maxima from another tile or uninitialised memory.
    {"tile_max_barrier_missing", GpuKernel::cuda_core, false, GpuBug::tile_max_barrier_missing,
     "no __syncthreads between the key groups' tile maxima in shared memory and their reads",
     "missing block barrier before a shared-memory stage is read"},
    // __shfl_xor_sync's width argument set to the xor distance (the segment of the lanes being combined) instead
    // of at least twice it: a lane whose partner lies in a later segment gets its own value back.
    {"butterfly_width_too_narrow", GpuKernel::cuda_core, false, GpuBug::butterfly_width_too_narrow,
     "the dot-product butterfly's shuffles pass width = xor distance: half the lanes add their own value",
     "wrong shuffle width in a warp reduction"},
    // A warp's row max over its 32 lanes reduced with xor 4 and 8 only (the 16-lane pattern of a smaller tile):
    // the two half-warps keep different running maxima of one row.
    {"tc_warp_max_missing_step", GpuKernel::tensor_core, false, GpuBug::tc_warp_max_missing_step,
     "tensor cores: the row's warp max leaves out the xor-16 shuffle, so half-warps disagree on the max",
     "missing step (wrong mask) in a warp shuffle reduction"},
    // The 128-byte swizzle undone with the 64-byte pattern (key % 4) on the ldmatrix side: lanes of keys 4-7 of
    // every 8 read another key's 16-byte piece.
    {"swizzle_xor_of_4_rows", GpuKernel::tensor_core, false, GpuBug::swizzle_xor_of_4_rows,
     "tensor cores: ldmatrix rows unswizzled with key % 4 where the copies swizzled with key % 8",
     "a swizzle that sends one lane group to the wrong bank row"},
    // The tensor copy's row coordinate taken one past the warp's first key (a 1-based slot, or the slot after an
    // inclusive start): the box's last row runs into the next page.
    {"tma_box_one_row_late", GpuKernel::tensor_core, false, GpuBug::tma_box_one_row_late,
     "tensor cores: each tensor copy's 16-row box starts one slot late, its last row in the next page",
     "a tensor-copy (TMA) box that runs past a page (coordinates off by one row)"},
    // The consumer's phase bit starting at 1 (the producer's convention): the wait returns at once while the copy
    // is in flight. (Where the phase has completed it would wait for the next one forever; the mutant gives up
    // after a bounded spin, and waits the right phase before re-arming, so that it never hangs.)
    {"mbarrier_parity_flipped", GpuKernel::tensor_core, false, GpuBug::mbarrier_parity_flipped,
     "tensor cores: the tile's mbarrier is waited on with the other phase parity, returning before the copy lands",
     "an mbarrier waited on with the wrong phase parity"},
    // An fp8 cache's two scales swapped at one site: the logits take the KV head's V scale, where engines that
    // store K and V alike (and tests with equal scales) never see the difference.
    {"fp8_k_scale_from_v_scales", GpuKernel::tensor_core_fp8, false, GpuBug::fp8_k_scale_from_v_scales,
     "tensor cores, fp8 cache: each logit is multiplied by the KV head's V scale instead of its K scale",
     "a dequantisation scale applied to the wrong tensor"},
    // The fp16 scores' per-row power of two undone by the row of the thread's query fragment (the mma's B
    // operand, row g) instead of the rows its scores hold (the accumulator's, 2t and 2t + 1): the fragment layouts
    // of an mma's operands and its accumulator mixed up.
    {"fp16_scores_row_of_fragment", GpuKernel::tensor_core_fp8, false, GpuBug::fp16_scores_row_of_fragment,
     "tensor cores, e4m3 cache: a score's power of two is undone with the query fragment's row, not the score's",
     "a per-row factor indexed by an mma operand's fragment layout instead of the accumulator's"},
    // The merge finds a row's partial state by the block's row capacity where the plan gave each block whole GQA
    // groups (3 rows at GQA 3): rows past the first block read slots that no block of this launch wrote.
    {"merge_slot_by_row_capacity", GpuKernel::merge, true, GpuBug::merge_slot_by_row_capacity,
     "the merge indexes a row's slot by the block's capacity, not the rows it holds: unwritten slots at GQA 3",
     "a split-K workspace slot read that the current launch did not write"},
    // The split count with an inclusive end (position / split + 2): each row merges one more slot, another row's
    // partial state (kept inside the workspace by a bounds check on the item).
    {"merge_reads_one_split_past", GpuKernel::merge, true, GpuBug::merge_reads_one_split_past,
     "the merge takes one split past the row's last: another row's partial state",
     "a split-K workspace slot read that the current launch did not write (index off by one split)"},
    // Each row's merge starts at the split its atomic arrival ticket names: every order is within the error bound,
    // but two runs do not give the same bits.
    {"merge_order_from_arrival", GpuKernel::merge, true, GpuBug::merge_order_from_arrival,
     "the merge starts each row at the split its atomic arrival ticket names and wraps around",
     "a reduction whose order depends on arrival (atomics), which breaks determinism"},
    // fp32 weights rounded to bf16 before they multiply V (the P operand of a bf16 PV product), where the model
    // declares fp32 weights; the denominator keeps the fp32 sums.
    {"p_rounded_to_bf16", GpuKernel::cuda_core, false, GpuBug::p_rounded_to_bf16,
     "each softmax weight is rounded to bf16 before it multiplies V: 8 bits where the model declares 24",
     "a probability fragment kept in lower precision than the error model declares"},
    // A split's first KV block computed with ceil instead of floor: the keys between the split's start and the
    // next block boundary are skipped (no split folds them) whenever the split size is not a multiple of the
    // block size.
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
    throw std::invalid_argument(std::string("the GPU mutants of the ") + std::string(kernel_name(kernel)) +
                                " kernel take only " +
                                (tensor ? "bf16 with head dims 40 to 64 (multiples of 8)" : "fp32 with head dims up to 32") +
                                (fp8 ? ", e4m3 caches with head dims 48 and 64," : "") + " and GQA ratios 1 to 4");
}

// Enqueues the mutant's kernels: its pinned attention instantiation (BUG there unless it is the merge's), then for
// split-K the merge (BUG there when it is the merge's).
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
  // At 32 lanes the merge's two shapes are one instantiation (a lane a thread), so the lanes shape serves both.
  if (plan.split_k)
    instances::launch_merge<Storage::f32, 32, MergeShape::lanes, KERNEL == GpuKernel::merge ? BUG : GpuBug::none>(
        batch, plan, stream);
}

template <GpuKernel KERNEL, int... BUGS>
LaunchAttention launcher_of(GpuBug bug, std::integer_sequence<int, BUGS...>) {
  LaunchAttention found = nullptr;
  // Only the bugs of KERNEL's sites (and none) are instantiated for it.
  ((static_cast<int>(bug) == BUGS ? (found = &launch_mutant<KERNEL, static_cast<GpuBug>(BUGS)>) : found), ...);
  return found;
}

LaunchAttention launcher_for(const GpuMutantSpec& spec) {
  using std::integer_sequence;
  using B = GpuBug;
  LaunchAttention launch = nullptr;
  switch (spec.kernel) {
    case GpuKernel::cuda_core:
      launch = launcher_of<GpuKernel::cuda_core>(
          spec.bug, integer_sequence<int, int(B::none), int(B::cp_async_wait_one_late), int(B::tile_max_barrier_missing),
                                     int(B::butterfly_width_too_narrow), int(B::p_rounded_to_bf16),
                                     int(B::split_start_rounded_up)>{});
      break;
    case GpuKernel::tensor_core:
      launch = launcher_of<GpuKernel::tensor_core>(
          spec.bug, integer_sequence<int, int(B::none), int(B::tc_cp_async_wait_one_late),
                                     int(B::tc_warp_max_missing_step), int(B::swizzle_xor_of_4_rows),
                                     int(B::tma_box_one_row_late), int(B::mbarrier_parity_flipped)>{});
      break;
    case GpuKernel::tensor_core_fp8:
      launch = launcher_of<GpuKernel::tensor_core_fp8>(
          spec.bug, integer_sequence<int, int(B::none), int(B::fp8_k_scale_from_v_scales),
                                     int(B::fp16_scores_row_of_fragment)>{});
      break;
    case GpuKernel::merge:
      launch = launcher_of<GpuKernel::merge>(
          spec.bug, integer_sequence<int, int(B::none), int(B::merge_slot_by_row_capacity),
                                     int(B::merge_reads_one_split_past), int(B::merge_order_from_arrival)>{});
      break;
  }
  if (launch == nullptr)
    throw std::logic_error("GPU mutant " + std::string(spec.name) + ": its bug has no site in the " +
                           std::string(kernel_name(spec.kernel)) + " kernel");
  return launch;
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
    // Only the fp8 kind reads an fp8 cache: e4m3, as production does (bf16 queries, head dims a multiple of 16).
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
