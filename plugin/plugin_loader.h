// The loader behind `pacheck --plugin PATH`: opens a shared library that implements the plugin ABI
// (include/pacheck/plugin.h), checks its ABI version and everything it declares, and registers each of its variants
// as an ExternalVariant (variants/external_variant.h) whose run converts the problem into the ABI's plain views,
// calls the plugin and converts its output back.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "pacheck/plugin.h"

namespace pacheck {

// A plugin that cannot be loaded; the message names the plugin's path and what is wrong.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadedPlugin {
  std::string path;                   // absolute, as given (symbolic links kept)
  std::vector<std::string> variants;  // the names it registered, in the plugin's order
};

// Opens the library at `path` (made absolute), finds pacheck_plugin_entry, and registers every variant it lists, or,
// when anything is wrong, none. Loading an already loaded path returns that load. Throws PluginError: no such file,
// not a shared library (dlerror's text), no entry point, another ABI version, a declaration that makes no sense, a
// name already taken.
const LoadedPlugin& load_plugin(const std::string& path);

// load_plugin after the entry point: validates `plugin` and registers its variants, naming it `path` in messages.
// The variants' descriptors must outlive the process (a plugin's static data does).
const LoadedPlugin& register_plugin(const pacheck_plugin* plugin, const std::string& path);

// The plugin a registered variant came from; nullptr for every other variant.
const LoadedPlugin* plugin_of(const std::string& variant);

// Whether this pacheck can run variants that want CUDA device memory (it was built with CUDA).
bool plugins_can_use_device_memory();

}  // namespace pacheck
