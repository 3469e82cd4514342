// An owning device allocation (cudaMalloc, never managed memory), moved not copied. C++17.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cuda/cuda_check.h"

namespace pacheck::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) cuda_check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)),
                              "allocating " + std::to_string(count * sizeof(T)) + " bytes on the device");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::logic_error("DeviceBuffer::upload: size mismatch");
    if (count_ > 0)
      cuda_check(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "copying to the device");
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      cuda_check(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "copying from the device");
    return host;
  }

 private:
  void release() {
    if (data_) cudaFree(data_);  // after a sticky kernel error this fails too; nothing more to do then
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace pacheck::cuda
