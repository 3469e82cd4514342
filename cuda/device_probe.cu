// The device probe of a build with nvcc: which devices answer the CUDA runtime, and selecting the one ctest assigned.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda/device_probe.h"

namespace pacheck {

namespace {
// The runtime's name and text of an error, which it then forgets (a sticky error would answer every later probe).
std::string runtime_error_text(cudaError_t status) {
  cudaGetLastError();
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}
}  // namespace

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
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  return std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + ", CUDA driver " + std::to_string(driver / 1000) + "." +
         std::to_string(driver % 1000 / 10) + ", " + std::to_string(prop.multiProcessorCount) + " SMs";
}

std::vector<CudaDevice> cuda_devices(std::string* reason) {
  if (!cuda_device_available(reason)) return {};
  int count = 0;
  cudaGetDeviceCount(&count);
  std::vector<CudaDevice> devices;
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp prop{};
    char bus_id[32] = {};
    cudaError_t status = cudaGetDeviceProperties(&prop, index);
    if (status == cudaSuccess) status = cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index);
    if (status != cudaSuccess) {
      if (reason) *reason = "CUDA device " + std::to_string(index) + " does not answer: " + runtime_error_text(status);
      return {};
    }
    devices.push_back({index, prop.name, bus_id});
  }
  return devices;
}

std::string use_ctest_assigned_gpu() {
  const std::optional<int> assigned = ctest_assigned_gpu();
  std::string reason;
  if (!cuda_device_available(&reason)) return "no GPU: " + reason;
  if (assigned) {
    const cudaError_t status = cudaSetDevice(*assigned);
    if (status != cudaSuccess) {
      int count = 0;
      cudaGetDeviceCount(&count);
      throw std::runtime_error("ctest assigned GPU " + std::to_string(*assigned) + ", which the CUDA runtime cannot " +
                               "select (it sees " + std::to_string(count) + "): " + runtime_error_text(status) +
                               "; was the resource spec file written on this machine, under the same " +
                               "CUDA_VISIBLE_DEVICES?");
    }
  }
  int current = 0;
  cudaGetDevice(&current);
  const std::vector<CudaDevice> devices = cuda_devices(&reason);
  if (devices.empty()) return "no GPU: " + reason;
  const CudaDevice& device = devices.at(static_cast<std::size_t>(current));
  return "GPU " + std::to_string(current) + " of " + std::to_string(devices.size()) + ": " + device.name +
         ", PCI bus " + device.pci_bus_id + (assigned ? " (assigned by ctest)" : " (the default: ctest assigned none)");
}

}  // namespace pacheck
