// pacheck mutants: the kill matrix, every property against every mutant (or those named) with a fixed seed, and
// what it says of the catalogue; --kills adds each kill's shrunk case and replay, --json writes it all. --gpu runs
// the GPU mutants, --sanitizers adds compute-sanitizer's four tools as killers. Exit 1 when a mutant survived.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "cli/commands.h"
#include "properties/catalogue.h"
#include "properties/kill_matrix.h"

namespace pacheck::cli {
namespace {

struct MutantsOptions {
  KillOptions kill;  // --cases, --seed, --mutant and --gpu set its fields
  std::string json_path;
  std::string failure_dir = "pacheck-failures/mutants";
  bool show_kills = false;
  std::vector<std::string> plugins;
  bool sanitizers = false;
  int sanitizer_cases = 20;
};

// compute-sanitizer TOOL on `pacheck check --variant MUTANT` (UlpBoundedAgreement, the matrix's seed): killed when
// the tool reports an error (its --error-exitcode 9), whatever the property says. The log lands in `folder`.
nlohmann::json sanitizer_run(const std::string& tool, const std::string& mutant, const MutantsOptions& o,
                             const std::filesystem::path& folder) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path log = folder / (mutant + "__" + tool + ".log");
  // synccheck's default barrier count overflows on these kernels (see bench/run_gpu_suite.sh).
  const std::string command = "timeout 600 compute-sanitizer --tool " + tool +
                              (tool == "synccheck" ? " --num-cuda-barriers 256" : "") + " --error-exitcode 9 '" +
                              self.string() + "' check --variant " + mutant + " --property UlpBoundedAgreement --cases " +
                              std::to_string(o.sanitizer_cases) + " --seed " + std::to_string(o.kill.seed) +
                              " --failures '" +
                              (folder / "failures").string() + "' >'" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  const int exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  long errors = 0;
  static const std::regex summary(R"((ERROR SUMMARY: (\d+) error)|(RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error))");
  for (std::sregex_iterator it(text.begin(), text.end(), summary), end; it != end; ++it)
    errors += std::stol((*it)[2].matched ? (*it)[2].str() : (*it)[4].str());
  return {{"tool", tool}, {"killed", exit == 9}, {"exit", exit}, {"errors", errors}, {"log", log.string()}};
}

// Every tool on every mutant of the matrix, or why not.
nlohmann::json run_sanitizers(const KillMatrix& matrix, const MutantsOptions& o) {
  if (std::system("compute-sanitizer --version >/dev/null 2>&1") != 0)
    return {{"skipped", "compute-sanitizer not found on PATH"}};
  const std::filesystem::path folder = std::filesystem::path(o.failure_dir) / "sanitizers";
  std::filesystem::create_directories(folder);
  nlohmann::json runs = nlohmann::json::object();
  for (const std::string& mutant : matrix.mutants) {
    for (const char* tool : {"memcheck", "racecheck", "synccheck", "initcheck"}) {
      runs[mutant].push_back(sanitizer_run(tool, mutant, o, folder));
      std::cerr << mutant << ": compute-sanitizer " << tool << (runs[mutant].back()["killed"] ? " killed it" : ": -")
                << "\n";
    }
  }
  return {{"cases", o.sanitizer_cases}, {"runs", runs}};
}

std::string format_sanitizers(const nlohmann::json& sanitizers) {
  if (sanitizers.contains("skipped")) return "sanitizers: skipped (" + sanitizers["skipped"].get<std::string>() + ")\n";
  std::string out = "sanitizers (compute-sanitizer on `check`, " + std::to_string(sanitizers["cases"].get<int>()) +
                    " cases; killers):\n";
  for (const auto& [mutant, runs] : sanitizers["runs"].items()) {
    std::string killers;
    for (const auto& run : runs)
      if (run["killed"]) killers += (killers.empty() ? "" : ", ") + run["tool"].get<std::string>();
    out += "  " + mutant + ": " + (killers.empty() ? "-" : killers) + "\n";
  }
  return out;
}

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
  if (o.sanitizers && !o.kill.gpu)
    throw CLI::ValidationError("--sanitizers", "runs on the GPU mutants only: add --gpu");
  std::string reason;
  if (o.kill.gpu && !cuda_device_available(&reason))
    return fail("--gpu runs the GPU mutants on a CUDA device, and there is none: " + reason);
  if (o.kill.gpu && matrix_mutants(true).empty())
    return fail("this pacheck was built without the GPU mutants (nvcc was not found)");
  std::ofstream json_file;  // opened first, so a bad path fails before the run rather than after it
  if (!o.json_path.empty()) {
    json_file.open(o.json_path);
    if (!json_file) return fail("cannot write the kill matrix to " + printable(o.json_path));
  }
  KillOptions options = o.kill;
  options.failure_dir = o.failure_dir;
  options.replay_program = program;
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
    for (const Variant* mutant : matrix_mutants(o.kill.gpu)) known.push_back(mutant->name());
    std::string hint;
    for (const std::string& name : o.kill.mutants)
      if (std::find(known.begin(), known.end(), name) == known.end()) hint += did_you_mean(name, known);
    throw CLI::ValidationError("--mutant", e.what() + hint);
  }
  if (o.show_kills) print_kills(matrix);
  std::cout << "\n" << format_matrix(matrix) << "\n" << format_summary(matrix);
  nlohmann::json json = to_json(matrix);
  json["gpu"] = o.kill.gpu;
  for (const std::string& mutant : matrix.mutants)
    json["descriptions"][mutant] = Registry::instance().get(mutant).description();
  if (o.sanitizers) {
    json["sanitizers"] = run_sanitizers(matrix, o);
    std::cout << format_sanitizers(json["sanitizers"]);
  }
  if (json_file.is_open()) {
    json_file << json.dump(2) << "\n";
    json_file.close();
    if (!json_file) return fail("could not write the kill matrix to " + printable(o.json_path));
    std::cout << "wrote " << o.json_path << "\n";
  }
  set_exit_code(summarize(matrix).survivors.empty() ? 0 : 1);
}

}  // namespace

void add_mutants_command(CLI::App& app) {
  auto options = std::make_shared<MutantsOptions>();
  CLI::App* cmd = app.add_subcommand("mutants", "Run every property against every mutant and print the kill matrix");
  cmd->add_option("--cases", options->kill.cases, "Cases per property and mutant")->check(whole_number(1, 100000000));
  cmd->add_option("--seed", options->kill.seed, "RapidCheck seed, the same for every cell")
      ->check(whole_number(0, UINT64_MAX));
  cmd->add_option("--mutant", options->kill.mutants,
                  "Mutant(s) to run (default: every mutant; `pacheck list --mutants`)");
  cmd->add_option("--json", options->json_path, "Also write the matrix, every kill's shrunk case and replay, as JSON");
  cmd->add_option("--failures", options->failure_dir, "Folder for the case files of the kills");
  cmd->add_flag("--kills", options->show_kills, "Print every kill's shrunk case and replay line");
  cmd->add_flag("--gpu", options->kill.gpu, "Run the GPU mutants (gpu_mutant_*) on the device instead of the CPU ones");
  cmd->add_flag("--sanitizers", options->sanitizers,
                "With --gpu: also run compute-sanitizer memcheck, racecheck, synccheck and initcheck on each mutant");
  cmd->add_option("--sanitizer-cases", options->sanitizer_cases, "Cases of each sanitizer run")
      ->check(whole_number(1, 100000));
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options, cmd] { run_mutants(*options, cmd->get_parent()->get_name()); });
}

}  // namespace pacheck::cli
