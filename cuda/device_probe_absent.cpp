// The device probe of a build without nvcc: no CUDA variant was compiled, so none can run.
#include "cuda/device_probe.h"

namespace pacheck {

bool cuda_device_available(std::string* reason) {
  if (reason) *reason = "pacheck was built without CUDA (nvcc not found or PACHECK_CUDA=OFF)";
  return false;
}

std::string cuda_device_description() { return "none: built without CUDA"; }

std::vector<CudaDevice> cuda_devices(std::string* reason) {
  cuda_device_available(reason);
  return {};
}

std::string use_ctest_assigned_gpu() {
  ctest_assigned_gpu();  // a malformed ctest environment is an error here too
  std::string reason;
  cuda_device_available(&reason);
  return "no GPU: " + reason;
}

}  // namespace pacheck
