// The PTX the kernels use, one thin wrapper per instruction; no kernel logic. C++17 CUDA.
#pragma once

#include <cuda.h>  // CUtensorMap, the type only

#include <cstdint>

namespace pacheck::cuda::ptx {

// The shared-state-space address of a generic pointer into shared memory.
__device__ inline unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --- asynchronous copies (sm_80) ---

// 16 bytes global -> shared without passing through registers; src_bytes = 0 reads nothing and writes zeros.
__device__ inline void copy_async_16(void* shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)), "l"(global_src),
               "r"(src_bytes)
               : "memory");
}
// copy_async_16 of 16 bytes under an L2 evict-first policy, made in the same asm block (ptxas hoists it). ptxas 13.0
// can drop its definition, leaving copies that read an unwritten register: see TileCopies (launch_rules.h).
__device__ inline void copy_async_16_evict_first(void* shared_dst, const void* global_src) {
  asm volatile(
      "{\n .reg .b64 policy;\n createpolicy.fractional.L2::evict_first.b64 policy, 1.0;\n"
      " cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, policy;\n}\n" ::"r"(shared_address(shared_dst)),
      "l"(global_src)
      : "memory");
}
__device__ inline void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `Pending` of this thread's latest copy groups are in flight; the rest are then visible to it.
template <int Pending>
__device__ inline void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// --- programmatic dependent launch (sm_90) ---

// The split-K merge is a programmatic dependent of the attention kernel: its blocks may start once every attention
// block has called allow_dependent_launch, find their partial states from the plan, and only then wait for the
// attention grid's stores, hiding the merge's launch and index loads behind the attention kernel's tail. Without a
// dependent launch the wait returns at once.
__device__ inline void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ inline void wait_for_prerequisite_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// --- tensor cores (sm_80) ---

// D = A B + D for one m16n8k16 tile, A 16x16 bf16 (4 registers of 2), B 16x8 bf16 (2), D 16x8 fp32 (4); with
// g = lane / 4, t = lane % 4: a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..];
// b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; d0, d1 = D[g][2t..2t+1], d2, d3 = D[g+8][2t..2t+1].
__device__ inline void mma_bf16_16x8x16(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,
                                                 unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The same with fp16 A and B.
__device__ inline void mma_f16_16x8x16(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1,
                                       unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Four fp8 values (E5M2, else e4m3; sm_89) as two fp16x2 registers, exactly (storage.cuh, widen_fp8x4). mov.b32 {l, h}
// folds into the conversions' operand selectors (a shift would cost one).
template <bool E5M2>
__device__ inline void fp8x4_to_f16x2(unsigned four, unsigned& low, unsigned& high) {
  if constexpr (E5M2)
    asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.rn.f16x2.e5m2x2 %0, l;\ncvt.rn.f16x2.e5m2x2 %1, h;\n}\n"
        : "=r"(low), "=r"(high)
        : "r"(four));
  else
    asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.rn.f16x2.e4m3x2 %0, l;\ncvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
        : "=r"(low), "=r"(high)
        : "r"(four));
}

// Four 8x8 16-bit matrices from shared memory: lane l gives row l % 8 of matrix l / 8 and receives r[m] = elements
// (l / 4, 2 (l % 4) .. + 1) of matrix m; transposed, elements (2 (l % 4) .. + 1, l / 4).
__device__ inline void load_matrices_x4(unsigned (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}
__device__ inline void load_matrices_x4_transposed(unsigned (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}

// The 8x8 16-bit matrix whose fragments the lanes hold as ldmatrix delivers them, transposed, in the same layout.
__device__ inline unsigned transpose_8x8(unsigned fragment) {
  unsigned transposed;
  asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(transposed) : "r"(fragment));
  return transposed;
}

// --- tensor copies and mbarriers (sm_90) ---

// A tensor copy moves a tensor map's box into shared memory and reports its bytes to an mbarrier, whose phase the
// consumer waits on. Both run in the async proxy: generic stores to bytes a copy later writes are fenced first.
__device__ inline void barrier_init(std::uint64_t* barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}
__device__ inline void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ inline void fence_shared_for_tensor_copies() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival announcing `bytes` of copies: the phase completes once they have landed.
__device__ inline void barrier_arrive_expecting(std::uint64_t* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}
// The box at coordinates (x, y, z) of `map` to shared_dst (1024-byte aligned for the 128-byte swizzle).
__device__ inline void tensor_copy_3d(void* shared_dst, const CUtensorMap& map, int x, int y, int z,
                                               std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(shared_address(shared_dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(shared_address(barrier))
      : "memory");
}
// Until the barrier's phase of this parity completes; its copies are then visible to this thread.
__device__ inline void barrier_wait(std::uint64_t* barrier, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
  } while (!done);
}

// As barrier_wait, giving up after `tries` polls; only a mutant uses it.
__device__ inline void barrier_wait_bounded(std::uint64_t* barrier, unsigned parity, int tries) {
  unsigned done = 0;
  for (int t = 0; t < tries && !done; ++t)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
}

}  // namespace pacheck::cuda::ptx
