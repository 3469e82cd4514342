// pacheck list: the registered variants with their capabilities, and the property catalogue.
#include <iostream>

#include "cli/commands.h"
#include "properties/catalogue.h"

namespace pacheck::cli {

void add_list_command(CLI::App& app) {
  auto include_mutants = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("list", "List the variants and the properties");
  cmd->add_flag("--mutants", *include_mutants, "Include the mutants");
  cmd->callback([include_mutants] {
    std::string reason;
    const bool gpu = gpu_available(&reason);
    std::cout << "variants:\n";
    for (const Variant* v : Registry::instance().variants(*include_mutants)) {
      const Capabilities c = v->capabilities();
      std::cout << "  " << v->name() << (c.is_mutant ? " [mutant]" : "") << ": " << v->description() << "\n    dtypes:";
      for (DType d : c.dtypes) std::cout << " " << dtype_name(d);
      std::cout << "; modes:";
      for (Mode m : c.modes) std::cout << " " << mode_name(m);
      std::cout << "; head_dim <= " << c.max_head_dim << "; " << (c.deterministic ? "deterministic" : "nondeterministic")
                << ", " << (c.batch_invariant ? "batch-invariant" : "batch-dependent");
      if (c.needs_gpu) std::cout << "; needs a GPU" << (gpu ? "" : " (" + reason + ")");
      std::cout << "\n";
    }
    std::cout << "properties:\n";
    for (const Property& p : catalogue()) std::cout << "  " << p.name << ": " << p.what << "\n";
  });
}

}  // namespace pacheck::cli
