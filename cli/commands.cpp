// The pieces the subcommands share: the exit code, variant selection, plugins, the GPU probe, the kernel pins.
#include "cli/commands.h"

#include <iostream>
#include <stdexcept>

#include "cuda/device_probe.h"
#include "plugin/plugin_loader.h"

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
  add_gpus_command(app);
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

void add_plugin_option(CLI::App* command, std::vector<std::string>& plugins) {
  command->add_option("--plugin", plugins,
                      "A shared library of variants (include/pacheck/plugin.h) to load first; repeatable");
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    try {
      load_plugin(path);
    } catch (const PluginError& e) {
      std::cerr << "error: " << e.what() << "\n";
      throw CLI::RuntimeError(2);  // the message is out; CLI11 prints nothing more for a RuntimeError
    }
  }
}

std::string plugin_arguments(const std::string& variant) {
  const LoadedPlugin* plugin = plugin_of(variant);
  return plugin ? " --plugin " + plugin->path : "";
}

std::string with_plugin_arguments(const std::string& text, const std::string& variant) {
  const std::string arguments = plugin_arguments(variant);
  if (arguments.empty()) return text;
  const std::string option = "--variant " + variant;
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
    const std::size_t end = at + option.size();
    const bool whole_word = end == text.size() || text[end] == ' ' || text[end] == '\n';
    if (!whole_word) continue;
    out.append(text, from, end - from);
    out += arguments;
    from = end;
  }
  return out + text.substr(from);
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
