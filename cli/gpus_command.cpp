// pacheck gpus [--resource-spec FILE] [--slots-per-gpu N]: lists the CUDA devices and writes ctest's resource spec
// file for them, so `ctest -L gpu -j N --resource-spec-file FILE` spreads the GPU tests over every GPU. Exits 1,
// saying why, when no device answers; under ctest it names the GPU ctest assigned. --fake-gpu-count N (hidden, for
// tests) lists N devices "fake GPU <i>" instead of the runtime's.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace pacheck::cli {
namespace {

struct GpusOptions {
  std::string resource_spec;
  int slots_per_gpu = 1;
  std::optional<int> fake_gpu_count;
};

std::vector<CudaDevice> fake_devices(int count, std::string* reason) {
  std::vector<CudaDevice> devices;
  for (int i = 0; i < count; ++i) devices.push_back({i, "fake GPU " + std::to_string(i), "fake:" + std::to_string(i)});
  if (count == 0) *reason = "--fake-gpu-count is 0";
  return devices;
}

// CTest's resource specification, version 1.0: one local node whose `gpus` are the devices by CUDA index.
nlohmann::json resource_spec(const std::vector<CudaDevice>& devices, int slots_per_gpu) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const CudaDevice& device : devices)
    gpus.push_back({{"id", std::to_string(device.index)}, {"slots", slots_per_gpu}});
  return {{"version", {{"major", 1}, {"minor", 0}}}, {"local", nlohmann::json::array({{{"gpus", gpus}}})}};
}

void write_resource_spec(const GpusOptions& o, const std::vector<CudaDevice>& devices) {
  {
    std::ofstream out(o.resource_spec);
    if (out) out << resource_spec(devices, o.slots_per_gpu).dump(2) << "\n";
    if (!out) {
      const std::string why = std::strerror(errno);
      return fail("cannot write the resource spec file " + printable(o.resource_spec) + ": " + why, 1);
    }
  }
  const std::size_t jobs = devices.size() * static_cast<std::size_t>(o.slots_per_gpu);
  std::cout << "wrote " << o.resource_spec << ": " << devices.size() << " GPU(s), " << o.slots_per_gpu
            << " slot(s) each; run the GPU tests on all of them with\n  ctest -L gpu -j " << jobs
            << " --resource-spec-file " << o.resource_spec << "\n";
}

void run_gpus(const GpusOptions& o) {
  std::string reason;
  const std::vector<CudaDevice> devices =
      o.fake_gpu_count ? fake_devices(*o.fake_gpu_count, &reason) : cuda_devices(&reason);
  if (devices.empty())
    return fail((o.resource_spec.empty() ? "no GPU: " : "no GPU to write a resource spec for: ") + reason, 1);
  for (const CudaDevice& device : devices)
    std::cout << "GPU " << device.index << ": " << device.name << ", PCI bus " << device.pci_bus_id << "\n";
  std::optional<int> assigned;
  try {
    assigned = ctest_assigned_gpu();
  } catch (const std::invalid_argument& e) {
    return fail(printable(e.what()));
  }
  if (assigned) {
    if (*assigned >= static_cast<int>(devices.size()))
      return fail("ctest assigned GPU " + std::to_string(*assigned) + ", which is not among the " +
                  std::to_string(devices.size()) + " listed: the resource spec file describes other GPUs");
    std::cout << "ctest assigned this process GPU " << *assigned << "\n";
  }
  if (!o.resource_spec.empty()) write_resource_spec(o, devices);
}

}  // namespace

void add_gpus_command(CLI::App& app) {
  auto options = std::make_shared<GpusOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gpus", "List the CUDA devices, and write ctest's resource spec file for them (--resource-spec)");
  cmd->add_option("--resource-spec", options->resource_spec,
                  "Write ctest's resource spec file for every GPU here; then run "
                  "`ctest -L gpu -j N --resource-spec-file FILE`");
  cmd->add_option("--slots-per-gpu", options->slots_per_gpu, "GPU tests that may share one GPU at a time")
      ->check(whole_number(1, 1 << 16))
      ->default_val(1);
  cmd->add_option_function<int>(
         "--fake-gpu-count", [options](int count) { options->fake_gpu_count = count; },
         "For tests only: list COUNT fake devices instead of asking the CUDA runtime")
      ->check(whole_number(0, 1 << 16))
      ->group("");  // hidden: not an option for users
  cmd->callback([options] { run_gpus(*options); });
}

}  // namespace pacheck::cli
