// CUDA errors as exceptions carrying the runtime's own text, so a failing launch or illegal address fails with it
// rather than hanging or returning zeros. C++17.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace pacheck::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, cudaError_t code)
      : std::runtime_error(what + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError naming `what` unless status is cudaSuccess.
inline void cuda_check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw CudaError(what, status);
}

// After a launch: a refused launch (bad configuration, too much shared memory) shows at once.
inline void check_launch(const std::string& kernel) { cuda_check(cudaGetLastError(), "launching " + kernel); }

// Waits for the stream; an error during execution (illegal address, trap) shows here.
inline void check_completion(cudaStream_t stream, const std::string& what) {
  cuda_check(cudaStreamSynchronize(stream), what + " (kernel execution)");
  cuda_check(cudaGetLastError(), what + " (kernel execution)");
}

}  // namespace pacheck::cuda
