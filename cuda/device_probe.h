// Whether a CUDA device can run the GPU variants, which devices there are, and which one ctest assigned. Built from
// device_probe.cu with the CUDA runtime, or from device_probe.cpp's PACHECK_NO_CUDA_PROBE part when the project is
// built without nvcc; device_probe.cpp holds what needs neither (reading ctest's resource-group environment).
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

// Whether a missing GPU is a failure rather than a reason to skip: PACHECK_REQUIRE_GPU=1 in the environment (a GPU
// CI runner sets it, so that a runner that lost its GPU cannot pass by skipping). Any other value but 0 or unset
// throws std::invalid_argument naming the variable.
bool gpu_required();

// The reason a GPU test cannot run, or nullopt when a device answers; throws std::runtime_error with the reason when
// gpu_required() and no device answers.
std::optional<std::string> reason_to_skip_gpu_tests();

// One CUDA device, as the runtime numbers it (the index cudaSetDevice takes).
struct CudaDevice {
  int index = 0;
  std::string name;        // "NVIDIA H200"
  std::string pci_bus_id;  // "0000:19:00.0"
};

// Every device the runtime sees, in its order; empty, with the reason in words, when none answers.
std::vector<CudaDevice> cuda_devices(std::string* reason);

// The GPU ctest assigned this process from its resource spec file: the id of the first `gpus` entry of the first
// resource group holding gpus (ctest sets CTEST_RESOURCE_GROUP_COUNT, CTEST_RESOURCE_GROUP_<i> = "gpus" and
// CTEST_RESOURCE_GROUP_<i>_GPUS = "id:<id>,slots:<n>" for a test that declares RESOURCE_GROUPS "gpus:1"). Empty
// when ctest assigned no GPU. Throws std::invalid_argument naming the variable and its value when the environment
// is malformed (a missing group variable, an entry without a numeric id).
std::optional<int> ctest_assigned_gpu();

// What a GPU test binary calls before any other CUDA call: selects the GPU ctest assigned (cudaSetDevice) and
// returns the line that says where the process runs, "GPU 1 of 8: NVIDIA H200, PCI bus 0000:19:00.0 (assigned by
// ctest)", or "no GPU: <reason>" when none answers (the GPU tests then skip). Throws std::runtime_error when ctest
// assigned a GPU the runtime cannot select, and std::invalid_argument as ctest_assigned_gpu does.
std::string use_ctest_assigned_gpu();

}  // namespace pacheck
