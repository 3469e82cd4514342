// Whether a CUDA device can run the GPU variants, which devices there are, and which one ctest assigned: from
// device_probe.cu with the CUDA runtime, or device_probe.cpp's PACHECK_NO_CUDA_PROBE part without nvcc;
// device_probe.cpp also holds what needs neither.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pacheck {

// True when at least one CUDA device answers; otherwise false with the reason in words.
bool cuda_device_available(std::string* reason);

// The current device: "NVIDIA H200, compute capability 9.0, CUDA driver 13.0, 132 SMs", or the reason none is
// available.
std::string cuda_device_description();

// Whether a missing GPU is a failure, not a skip: PACHECK_REQUIRE_GPU=1 (a GPU CI runner sets it, so losing its GPU
// cannot pass by skipping). Set to anything but 0, 1 or empty, it throws std::invalid_argument naming the variable.
bool gpu_required();

// Why a GPU test cannot run, or nullopt when a device answers; throws std::runtime_error when gpu_required().
std::optional<std::string> reason_to_skip_gpu_tests();

struct CudaDevice {
  int index = 0;  // as cudaSetDevice takes it
  std::string name;        // "NVIDIA H200"
  std::string pci_bus_id;  // "0000:19:00.0"
};

// Every device the runtime sees, in its order; empty, with the reason in words, when none answers.
std::vector<CudaDevice> cuda_devices(std::string* reason);

// The GPU ctest assigned this process: the id of the first `gpus` entry of the first resource group holding gpus
// (CTEST_RESOURCE_GROUP_COUNT, CTEST_RESOURCE_GROUP_<i> = "gpus", CTEST_RESOURCE_GROUP_<i>_GPUS = "id:<id>,slots:<n>"
// for RESOURCE_GROUPS "gpus:1"); empty when none. Throws std::invalid_argument naming the variable and its value on
// a malformed environment (a missing group variable, an entry without a numeric id).
std::optional<int> ctest_assigned_gpu();

// A GPU test binary's first CUDA call: selects the GPU ctest assigned and returns where the process runs, "GPU 1 of
// 8: NVIDIA H200, PCI bus 0000:19:00.0 (assigned by ctest)", or "no GPU: <reason>" (the GPU tests then skip).
// Throws std::runtime_error when the runtime cannot select it, std::invalid_argument as ctest_assigned_gpu.
std::string use_ctest_assigned_gpu();

}  // namespace pacheck
