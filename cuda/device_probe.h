// Whether a CUDA device can run the GPU variants. Built from device_probe.cu with the CUDA runtime, or from
// device_probe_absent.cpp when the project is built without nvcc.
#pragma once

#include <string>

namespace pacheck {

// True when at least one CUDA device answers; otherwise false with the reason in words.
bool cuda_device_available(std::string* reason);

// "NVIDIA H200, driver 13.0, compute capability 9.0", or the reason none is available.
std::string cuda_device_description();

}  // namespace pacheck
