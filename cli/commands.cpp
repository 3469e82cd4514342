#include "cli/commands.h"

#include <stdexcept>

#include "cuda/device_probe.h"

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

bool gpu_available(std::string* reason) { return cuda_device_available(reason); }

void add_pin_options(CLI::App* command, KernelPins& pins) {
  const auto choice = [](auto parse, std::string names) {
    return CLI::Validator(
        [parse, names](std::string& value) {
          return parse(value) ? std::string() : "'" + value + "' is not one of " + names;
        },
        "{" + names + "}");
  };
  command
      ->add_option_function<std::string>(
          "--layout", [&pins](const std::string& v) { pins.layout = *parse_kernel_layout(v); },
          "Pin the kernel layout where a variant chooses one (the CUDA tensor-core kernel at head dims 65-128)")
      ->check(choice(parse_kernel_layout, kernel_layout_names()))
      ->default_str("automatic");
  command
      ->add_option_function<std::string>(
          "--merge", [&pins](const std::string& v) { pins.merge = *parse_merge_shape(v); },
          "Pin the split-K merge's thread shape where a variant chooses one (cuda_splitk)")
      ->check(choice(parse_merge_shape, merge_shape_names()))
      ->default_str("automatic");
}

}  // namespace pacheck::cli
