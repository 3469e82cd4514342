// pacheck list: the registered variants with their capabilities, and the property catalogue.
#include <algorithm>
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "plugin/plugin_loader.h"
#include "properties/catalogue.h"

namespace pacheck::cli {

void add_list_command(CLI::App& app) {
  auto include_mutants = std::make_shared<bool>(false);
  auto plugins = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("list", "List the variants and the properties");
  cmd->add_flag("--mutants", *include_mutants, "Include the mutants");
  add_plugin_option(cmd, *plugins);
  cmd->callback([include_mutants, plugins] {
    load_plugins(*plugins);
    std::string reason;
    const bool gpu = cuda_device_available(&reason);
    std::cout << "variants:\n";
    for (const Variant* v : Registry::instance().variants(*include_mutants)) {
      const Capabilities c = v->capabilities();
      const LoadedPlugin* plugin = plugin_of(v->name());
      std::cout << "  " << v->name() << (c.is_mutant ? " [mutant]" : "")
                << (plugin ? " [plugin " + plugin->path + "]" : "") << ": " << v->description() << "\n    dtypes:";
      for (DType d : c.dtypes) std::cout << " " << dtype_name(d);
      std::cout << "; modes:";
      for (Mode m : c.modes) std::cout << " " << mode_name(m);
      std::cout << "; head_dim <= " << c.max_head_dim;
      std::vector<int> head_dims;  // listed when the variant takes only a few of the head dims up to its limit
      for (int d = 1; d <= std::min(c.max_head_dim, 256); ++d)
        if (c.supports_head_dim(d)) head_dims.push_back(d);
      const auto print = [](const char* what, const std::vector<int>& values) {
        if (values.empty()) return;
        std::cout << "; " << what;
        for (int x : values) std::cout << " " << x;
      };
      if (head_dims.size() <= 16 && static_cast<int>(head_dims.size()) < std::min(c.max_head_dim, 256))
        print("head dims", head_dims);
      print("block sizes", c.block_sizes);
      print("GQA ratios", c.gqa_ratios);
      std::cout << "; " << (c.deterministic ? "deterministic" : "nondeterministic")
                << ", " << (c.batch_invariant ? "batch-invariant" : "batch-dependent");
      if (c.needs_gpu) std::cout << "; needs a GPU" << (gpu ? "" : " (" + reason + ")");
      std::cout << "\n";
    }
    std::cout << "properties:\n";
    for (const Property& p : catalogue()) std::cout << "  " << p.name << ": " << p.what << "\n";
  });
}

}  // namespace pacheck::cli
