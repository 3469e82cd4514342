// pacheck: the main executable. Each subcommand lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"pacheck: property-based and differential testing of paged-attention kernels against an exact oracle"};
  app.require_subcommand(1);
  pacheck::cli::add_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return pacheck::cli::exit_code();
}
