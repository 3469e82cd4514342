// The GPU mutants: the CUDA kernels with one GPU-only bug apiece (a GpuBug instantiation), one row each of
// gpu_mutants.cpp's table, registered as the variants gpu_mutant_<name> next to the bug-free forms
// gpu_mutant_none_<kernel>. Built only into pacheck_cuda_mutants, which the production kernels never link.
#pragma once

#include <span>
#include <string_view>

#include "cuda/paged_attention.h"

namespace pacheck::cuda::mutants {

// Which pinned instantiation a mutant breaks (each serves one draw that its capabilities pin):
//   cuda_core    the CUDA-core kernel, fp32, 32 head lanes (head dims 4, 8, ..., 32), 4 rows (GQA 1 to 4);
//   tensor_core  the tensor-core kernel, bf16, 64 head lanes (head dims 40 to 64, multiples of 8), 4 rows, block
//                sizes multiples of 16 (so that tiles of 16, 32 or 64 keys take the tensor copies);
//   tensor_core_fp8
//                tensor_core's draw with e4m3 caches among it (head dims 48 and 64 there): a bug whose site reads an
//                fp8 cache (a bf16 cache runs production's instance);
//   merge        the split-K merge after the CUDA-core kernel of cuda_core's draw.
enum class GpuKernel { cuda_core, tensor_core, tensor_core_fp8, merge };

struct GpuMutantSpec {
  std::string_view name;  // the variant is gpu_mutant_<name>
  GpuKernel kernel = GpuKernel::cuda_core;
  bool split_k = false;  // the counterpart: cuda_splitk, else cuda_fused
  GpuBug bug = GpuBug::none;
  std::string_view bug_description;  // one line: what the bug does
  std::string_view bug_class;        // the real GPU mistake it stands for
};

// Every GPU mutant; the bug-free forms, one per kernel (gpu_mutant_none_<kernel>).
std::span<const GpuMutantSpec> gpu_mutant_catalogue();
std::span<const GpuMutantSpec> gpu_mutant_bug_free_forms();
std::string_view kernel_name(GpuKernel kernel);

}  // namespace pacheck::cuda::mutants
