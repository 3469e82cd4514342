// The device probe of a build without nvcc: no CUDA variant was compiled, so none can run.
#include "cuda/device_probe.h"

namespace pacheck {

bool cuda_device_available(std::string* reason) {
  if (reason) *reason = "pacheck was built without CUDA (nvcc not found or PACHECK_CUDA=OFF)";
  return false;
}

std::string cuda_device_description() { return "none: built without CUDA"; }

}  // namespace pacheck
