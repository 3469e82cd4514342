#include "cli/commands.h"

#include <stdexcept>

#include "cuda/device_probe.h"
#include "cuda/kernel_pins.h"

namespace pacheck::cli {
namespace {
int g_exit_code = 0;
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void add_commands(CLI::App& app) {
  add_check_command(app);
  add_list_command(app);
  add_replay_command(app);
  add_fuzz_command(app);
  add_mutants_command(app);
  add_report_command(app);
}

std::vector<const Variant*> select_variants(const std::vector<std::string>& names, bool include_mutants) {
  if (names.empty()) return Registry::instance().variants(include_mutants);
  std::vector<const Variant*> out;
  for (const std::string& name : names) {
    try {
      out.push_back(&Registry::instance().get(name));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--variant", e.what());
    }
  }
  return out;
}

void require_valid_kernel_pins() {
  try {
    cuda::check_kernel_pins();
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("environment", e.what());
  }
}

bool gpu_available(std::string* reason) {
  require_valid_kernel_pins();
  return cuda_device_available(reason);
}

std::string program_for_replay_lines(const std::string& program) {
  return cuda::replay_prefix_from_environment() + program;
}

}  // namespace pacheck::cli
