// The mutant kill matrix: every property of the catalogue against every mutant, recording whether it was
// killed, after how many cases, and how small the shrunk counterexample is. `pacheck mutants` prints it, the
// ctest suite asserts every mutant dies and every property kills, and the reports embed it.
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
  int cases_to_kill = 0;       // the number of the first failing case (passing cases + 1); 0 when not killed
  std::size_t shrunk_size = 0; // size of the shrunk counterexample: sum over sequences of context_len, times query
                               // heads, times head_dim (0 when not killed)
  std::string shrunk_case;     // describe() of the shrunk problem, and its knobs
  // The one-line command that re-runs exactly the shrunk failing case (`pacheck check --variant M --property P
  // --seed S --reproduce R`): it reproduces a kill by any property, and a mutant that throws.
  std::string replay;
  // `pacheck replay FILE --variant M` for the case file the property saved (empty when it saved none, e.g. when
  // the mutant threw): replays the problem against the oracle.
  std::string case_file_replay;
  std::string failure;         // RapidCheck's failure message (empty unless killed), or why the run gave up
  std::string reproduce;       // RapidCheck's reproduce string of the shrunk case (empty unless killed)
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
  std::vector<std::string> mutants;            // empty: every mutant of the kind `gpu` selects
  // The GPU mutants (needs_gpu, cuda/mutants/) instead of the CPU ones; their bug-free forms (gpu_mutant_none_*)
  // are never part of a matrix.
  bool gpu = false;
  std::function<void(const KillCell&)> progress;  // called after each cell
};

// The mutants a matrix runs: the CPU mutants, or with `gpu` the GPU mutants, less the bug-free forms.
std::vector<const Variant*> matrix_mutants(bool gpu);
// Throws std::invalid_argument naming the registered mutants when options.mutants names an unknown mutant (or a
// variant that is not a mutant).
KillMatrix run_kill_matrix(const KillOptions& options);
// Re-runs exactly the shrunk failing case of a killed cell (its reproduce string) and records it as
// run_kill_matrix does. The replayed cell names the same case as the original: that is how kill_matrix_test
// checks that the case the matrix records while RapidCheck shrinks is the counterexample RapidCheck reports.
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
  // Per killed mutant, the fewest cases any property needed to kill it; their median and worst.
  std::vector<int> cases_to_first_kill;
  double median_cases_to_first_kill = 0;
  int worst_cases_to_first_kill = 0;
  std::string slowest_mutant;  // the one with the worst
};
KillSummary summarize(const KillMatrix& matrix);
// The summary in words, after the matrix.
std::string format_summary(const KillMatrix& matrix);

}  // namespace pacheck
