// The device probe's part that needs no CUDA runtime (ctest's resource groups), and without nvcc
// (PACHECK_NO_CUDA_PROBE) the whole probe: no CUDA variant was compiled, so none can run.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/device_probe.h"

namespace pacheck {

bool gpu_required() {
  const char* value = std::getenv("PACHECK_REQUIRE_GPU");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "0") return false;
  if (std::string(value) == "1") return true;
  throw std::invalid_argument(std::string("PACHECK_REQUIRE_GPU must be 1 or 0, not '") + value + "'");
}

std::optional<std::string> reason_to_skip_gpu_tests() {
  std::string reason;
  if (cuda_device_available(&reason)) return std::nullopt;
  if (gpu_required()) throw std::runtime_error("PACHECK_REQUIRE_GPU=1, but " + reason);
  return reason;
}

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at = text.find(separator); at != std::string::npos; at = text.find(separator, from)) {
    parts.push_back(text.substr(from, at - from));
    from = at + 1;
  }
  parts.push_back(text.substr(from));
  return parts;
}

// A decimal number 0..999999999 spelled by the whole of `text`.
std::optional<int> parse_index(const std::string& text) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    return std::nullopt;
  return std::stoi(text);
}

// A variable ctest sets with CTEST_RESOURCE_GROUP_COUNT; its absence means the environment is not ctest's.
std::string group_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value)
    throw std::invalid_argument(name + " is not set, but CTEST_RESOURCE_GROUP_COUNT is: ctest sets both for a "
                                "test with RESOURCE_GROUPS");
  return value;
}

}  // namespace

std::optional<int> ctest_assigned_gpu() {
  const char* count_text = std::getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (!count_text) return std::nullopt;
  const std::optional<int> count = parse_index(count_text);
  if (!count)
    throw std::invalid_argument(std::string("CTEST_RESOURCE_GROUP_COUNT is '") + count_text +
                                "', not a number of resource groups");
  for (int group = 0; group < *count; ++group) {
    const std::string prefix = "CTEST_RESOURCE_GROUP_" + std::to_string(group);
    const std::vector<std::string> types = split(group_variable(prefix), ',');
    if (std::find(types.begin(), types.end(), "gpus") == types.end()) continue;
    const std::string name = prefix + "_GPUS";
    const std::string gpus = group_variable(name);
    // Entries "id:<id>,slots:<n>", separated by ';' where the group holds several GPUs: the first one's id.
    for (const std::string& field : split(split(gpus, ';').front(), ','))
      if (field.rfind("id:", 0) == 0)
        if (const std::optional<int> id = parse_index(field.substr(3))) return id;
    throw std::invalid_argument(name + " is '" + gpus + "', not entries id:<n>,slots:<n> with a numeric id " +
                                "(the ids of `pacheck gpus --resource-spec` are CUDA device indices)");
  }
  return std::nullopt;
}

#ifdef PACHECK_NO_CUDA_PROBE
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
#endif  // PACHECK_NO_CUDA_PROBE

}  // namespace pacheck
