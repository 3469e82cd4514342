#include <cuda_runtime.h>

#include <string>

#include "cuda/device_probe.h"

namespace pacheck {

bool cuda_device_available(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (reason) *reason = std::string("no CUDA device: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so later probes answer the same
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no CUDA device: cudaGetDeviceCount found none";
    return false;
  }
  return true;
}

std::string cuda_device_description() {
  std::string reason;
  if (!cuda_device_available(&reason)) return reason;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  return std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + ", CUDA driver " + std::to_string(driver / 1000) + "." +
         std::to_string(driver % 1000 / 10) + ", " + std::to_string(prop.multiProcessorCount) + " SMs";
}

}  // namespace pacheck
