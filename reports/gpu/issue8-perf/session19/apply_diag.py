#!/usr/bin/env python3
# Session 19 diagnostic (not for the tree): each tensor-core attention block stamps %globaltimer at its start, once
# its work item and sequence are loaded, once warp 0 has its first table entry (its first copies go out next),
# once warp 0's first tile has landed, and at its end; plus its SM. The bench writes them per launch when
# BLOCK_TRACE is set. Usage: apply_diag.py <tree>
import sys
root = sys.argv[1]
def edit(path, pairs, optional=False):
    p = root + '/' + path
    s = open(p).read()
    for old, new in pairs:
        if optional and s.count(old) != 1: continue
        assert s.count(old) == 1, (path, old)
        s = s.replace(old, new)
    open(p, 'w').write(s)

stamp = '''
__device__ unsigned long long g_block_trace[8 * 8192];
__device__ inline void diag_stamp(int slot, unsigned dep) {
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (b >= 8192) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : "r"(dep) : "memory");
  g_block_trace[8 * b + slot] = t;
  if (slot == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    g_block_trace[8 * b + 7] = smid;
  }
}
'''
edit('cuda/tensor_core_attention_kernel.cuh', [
  ('namespace pacheck::cuda::kernels {\n', 'namespace pacheck::cuda::kernels {\n' + stamp),
  ('  allow_dependent_launch();  // a split-K merge may start preparing now (see wait_for_prerequisite_grids)\n',
   '  if (threadIdx.x == 0) diag_stamp(0, 0);\n  allow_dependent_launch();  // a split-K merge may start preparing now (see wait_for_prerequisite_grids)\n'),
  ('  const BlockWork work = load_block_work(batch, plan);\n',
   '  const BlockWork work = load_block_work(batch, plan);\n  if (threadIdx.x == 0) diag_stamp(1, work.seq.table_offset + work.item.key_begin);\n'),

  ('    wait_for_tile(i);\n', '    wait_for_tile(i);\n    if (i == 0 && threadIdx.x == 0) diag_stamp(3, 0);\n'),
  ('''  write_item_result<__nv_bfloat16, ROWS, LANES, kWarps, kThreads>(batch, plan, work, group_acc, den_s,
                                                                  max_s);
''', '''  write_item_result<__nv_bfloat16, ROWS, LANES, kWarps, kThreads>(batch, plan, work, group_acc, den_s,
                                                                  max_s);
  __syncthreads();
  if (threadIdx.x == 0) diag_stamp(4, 0);
'''),
])
edit('cuda/tensor_core_attention_kernel.cuh', [
  ('        const int first_row = static_cast<int>(slot_row(i, 0));\n',
   '        const int first_row = static_cast<int>(slot_row(i, 0));\n        if (i == 0 && warp == 0) diag_stamp(2, first_row);\n'),
  ('        const int first_row = static_cast<int>(slot_row(i, 0, staged));\n',
   '        const int first_row = static_cast<int>(slot_row(i, 0, staged));\n        if (i == 0 && warp == 0) diag_stamp(2, first_row);\n'),
], optional=True)
# the block-wide barrier before the loop (base and fix place it differently): stamp 5
edit('cuda/tensor_core_attention_kernel.cuh', [
  ('  __syncthreads();\n\n  const int live_chunks = head_dim * 2 / 16;\n',
   '  __syncthreads();\n  if (threadIdx.x == 0) diag_stamp(5, 0);\n\n  const int live_chunks = head_dim * 2 / 16;\n'),
  ('  __syncthreads();  // the staged table, the barriers and the zeroed stages are visible to every thread\n',
   '  if (threadIdx.x == 0) diag_stamp(6, qb[0][0] + qb[kHeadSteps - 1][1]);\n  __syncthreads();  // the staged table, the barriers and the zeroed stages are visible to every thread\n  if (threadIdx.x == 0) diag_stamp(5, 0);\n'),
], optional=True)
edit('cuda/paged_attention.cu', [
  ('void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {\n',
   '''std::vector<unsigned long long> diag_read_block_trace() {
  std::vector<unsigned long long> t(8 * 8192);
  cuda_check(cudaMemcpyFromSymbol(t.data(), kernels::g_block_trace, t.size() * 8), "reading the block trace");
  return t;
}
void diag_clear_block_trace() {
  std::vector<unsigned long long> t(8 * 8192, 0);
  cuda_check(cudaMemcpyToSymbol(kernels::g_block_trace, t.data(), t.size() * 8), "clearing the block trace");
}

void launch_attention(const DeviceBatch& batch, const DevicePlan& plan, cudaStream_t stream) {
'''),
  ('#include <string>\n', '#include <string>\n#include <vector>\n'),
])
edit('cuda/bench/paged_attention_bench.cu', [
  ('namespace pacheck::cuda {\nnamespace {\n', 'namespace pacheck::cuda {\nstd::vector<unsigned long long> diag_read_block_trace();\nvoid diag_clear_block_trace();\nnamespace {\n'),
  ('        std::size_t printed = rows.size() - 2;\n', '''        std::size_t printed = rows.size() - 2;
        if (const char* trace = std::getenv("BLOCK_TRACE")) {
          for (int which = 0; which < 2; ++which)
            for (int rep = 0; rep < 3; ++rep) {
              diag_clear_block_trace();
              l2_flush(rep);
              touch(which ? splitk_metadata : fused_metadata);
              cuda_check(cudaDeviceSynchronize(), "trace flush");
              if (which == 0) launch_attention(fused_batch, fused_plan.view(), nullptr);
              else launch_attention(splitk_batch, splitk_plan.view(), nullptr);
              cuda_check(cudaDeviceSynchronize(), "trace run");
              const std::vector<unsigned long long> t = diag_read_block_trace();
              const std::string path = std::string(trace) + "_" + std::to_string(gqa) + "_" + std::to_string(batch) +
                                       "_" + std::to_string(context) + (which ? "_splitk_" : "_fused_") +
                                       std::to_string(rep) + ".csv";
              FILE* tf = std::fopen(path.c_str(), "w");
              for (int bl = 0; bl < 8192; ++bl)
                if (t[8 * bl] != 0)
                  std::fprintf(tf, "%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\\n", bl, t[8 * bl], t[8 * bl + 1], t[8 * bl + 2],
                               t[8 * bl + 3], t[8 * bl + 4], t[8 * bl + 7], t[8 * bl + 5], t[8 * bl + 6]);
              std::fclose(tf);
            }
        }
'''),
])
print('diag applied to', root)
