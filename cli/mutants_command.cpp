// pacheck mutants: the kill matrix. Runs every property of the catalogue against every mutant (or the ones named)
// with a fixed seed, prints the matrix (mutants as rows, properties as columns, each cell the case on which the
// property first killed the mutant) and what it says about the catalogue; --kills adds every kill's shrunk case
// and replay line, --json writes all of it. Exit status: 0 when every mutant died, 1 when one survived.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "properties/catalogue.h"
#include "properties/kill_matrix.h"

namespace pacheck::cli {
namespace {

struct MutantsOptions {
  int cases = 100;
  std::uint64_t seed = 1;
  std::vector<std::string> mutants;
  std::string json_path;
  std::string failure_dir = "pacheck-failures/mutants";
  bool show_kills = false;
  std::vector<std::string> plugins;
};

void print_kills(const KillMatrix& matrix) {
  for (const KillCell& c : matrix.cells) {
    if (!c.killed) continue;
    std::cout << "\n" << c.mutant << " killed by " << c.property << " on case " << c.cases_to_kill
              << ", shrunk to size " << c.shrunk_size << ":\n"
              << c.shrunk_case << "reproduce: " << c.replay << "\n";
    if (!c.case_file_replay.empty()) std::cout << "replay: " << c.case_file_replay << "\n";
  }
}

void run_mutants(const MutantsOptions& o, const std::string& program) {
  load_plugins(o.plugins);
  std::ofstream json_file;  // opened first, so a bad path fails before the run rather than after it
  if (!o.json_path.empty()) {
    json_file.open(o.json_path);
    if (!json_file) {
      std::cerr << "error: cannot write the kill matrix to " << printable(o.json_path) << "\n";
      set_exit_code(2);
      return;
    }
  }
  KillOptions options;
  options.cases = o.cases;
  options.seed = o.seed;
  options.failure_dir = o.failure_dir;
  options.replay_program = program;
  options.mutants = o.mutants;
  const std::size_t properties = catalogue().size();
  int kills = 0;
  std::size_t cells = 0;
  options.progress = [&](const KillCell& c) {
    kills += c.killed ? 1 : 0;
    if (++cells % properties != 0) return;
    std::cerr << c.mutant << ": killed by " << kills << " of " << properties << " properties\n";
    kills = 0;
  };
  KillMatrix matrix;
  try {
    matrix = run_kill_matrix(options);
  } catch (const std::invalid_argument& e) {
    if (json_file.is_open()) {
      json_file.close();
      std::filesystem::remove(o.json_path);
    }
    std::vector<std::string> known;
    for (const Variant* mutant : Registry::instance().mutants()) known.push_back(mutant->name());
    std::string hint;
    for (const std::string& name : o.mutants)
      if (std::find(known.begin(), known.end(), name) == known.end()) hint += did_you_mean(name, known);
    throw CLI::ValidationError("--mutant", e.what() + hint);
  }
  if (o.show_kills) print_kills(matrix);
  std::cout << "\n" << format_matrix(matrix) << "\n" << format_summary(matrix);
  if (json_file.is_open()) {
    json_file << to_json(matrix).dump(2) << "\n";
    json_file.close();
    if (!json_file) {
      std::cerr << "error: could not write the kill matrix to " << printable(o.json_path) << "\n";
      set_exit_code(2);
      return;
    }
    std::cout << "wrote " << o.json_path << "\n";
  }
  set_exit_code(summarize(matrix).survivors.empty() ? 0 : 1);
}

}  // namespace

void add_mutants_command(CLI::App& app) {
  auto options = std::make_shared<MutantsOptions>();
  CLI::App* cmd = app.add_subcommand("mutants", "Run every property against every mutant and print the kill matrix");
  cmd->add_option("--cases", options->cases, "Cases per property and mutant")->check(whole_number(1, 100000000));
  cmd->add_option("--seed", options->seed, "RapidCheck seed, the same for every cell")->check(whole_number(0, UINT64_MAX));
  cmd->add_option("--mutant", options->mutants, "Mutant(s) to run (default: every mutant; `pacheck list --mutants`)");
  cmd->add_option("--json", options->json_path, "Also write the matrix, every kill's shrunk case and replay, as JSON");
  cmd->add_option("--failures", options->failure_dir, "Folder for the case files of the kills");
  cmd->add_flag("--kills", options->show_kills, "Print every kill's shrunk case and replay line");
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options, cmd] { run_mutants(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
