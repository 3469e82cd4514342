// The mutant kill matrix: every property against every mutant, with whether and after how many cases it killed,
// and the shrunk counterexample. `pacheck mutants` prints it, the tests check it, the reports embed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pacheck {

class Variant;

struct KillCell {
  std::string mutant;
  std::string property;
  bool applicable = true;      // the property applies to the mutant's capabilities
  bool killed = false;
  // The rest is 0 or empty unless killed (but for `failure` when the run gave up).
  int cases_to_kill = 0;        // the number of the first failing case (passing cases + 1)
  std::size_t shrunk_size = 0;  // of the shrunk case: total context length x query heads x head_dim
  std::string shrunk_case;      // describe() of the shrunk problem, and its knobs
  // `pacheck check --variant M --property P --seed S --reproduce R`: re-runs exactly the shrunk failing case.
  std::string replay;
  // `pacheck replay FILE --variant M` for the case file the property saved (empty when none, e.g. the mutant threw).
  std::string case_file_replay;
  std::string failure;    // RapidCheck's failure message, or why the run gave up
  std::string reproduce;  // RapidCheck's reproduce string of the shrunk case
};

struct KillMatrix {
  std::vector<std::string> mutants;     // rows
  std::vector<std::string> properties;  // columns
  std::vector<KillCell> cells;          // row-major: mutants x properties
  int cases_per_property = 0;
  std::uint64_t seed = 0;

  const KillCell& at(std::size_t mutant, std::size_t property) const { return cells[mutant * properties.size() + property]; }
};

struct KillOptions {
  int cases = 100;
  std::uint64_t seed = 1;
  std::filesystem::path failure_dir = "pacheck-failures/mutants";
  std::string replay_program = "pacheck";
  std::vector<std::string> mutants;  // empty: every mutant matrix_mutants(gpu) gives
  bool gpu = false;
  std::function<void(const KillCell&)> progress;  // called after each cell
};

// The mutants a matrix runs: the CPU mutants, or with `gpu` the GPU ones (cuda/mutants/) less their bug-free forms
// (gpu_mutant_none_*).
std::vector<const Variant*> matrix_mutants(bool gpu);
// Throws std::invalid_argument, naming the mutants, when options.mutants names something else.
KillMatrix run_kill_matrix(const KillOptions& options);
// Re-runs a killed cell's shrunk case (its reproduce string) and records it as run_kill_matrix does: how
// kill_matrix_test checks that the recorded case is RapidCheck's counterexample.
KillCell replay_kill(const KillCell& cell, const KillOptions& options);
nlohmann::json to_json(const KillMatrix& matrix);
// Mutants as rows, properties as columns; each cell the cases to the first kill, or '-' when it survived.
std::string format_matrix(const KillMatrix& matrix);

// What the matrix says about the catalogue.
struct KillSummary {
  std::size_t killed_mutants = 0;
  std::vector<std::string> survivors;        // mutants no property killed
  std::vector<std::string> idle_properties;  // properties that killed no mutant
  // Mutants exactly one property kills, with that property: where the catalogue is thin.
  std::vector<std::pair<std::string, std::string>> single_kills;
  // Per killed mutant, the fewest cases any property needed; their median and worst.
  std::vector<int> cases_to_first_kill;
  double median_cases_to_first_kill = 0;
  int worst_cases_to_first_kill = 0;
  std::string slowest_mutant;  // the one with the worst
};
KillSummary summarize(const KillMatrix& matrix);
// The summary in words, after the matrix.
std::string format_summary(const KillMatrix& matrix);

}  // namespace pacheck
