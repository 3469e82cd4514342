// The mutant kill matrix: every property of the catalogue against every mutant, recording whether it was
// killed, after how many cases, and how small the shrunk counterexample is. `pacheck mutants` prints it, the
// ctest suite asserts every mutant dies and every property kills, and the reports embed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pacheck {

struct KillCell {
  std::string mutant;
  std::string property;
  bool applicable = true;      // the property applies to the mutant's capabilities
  bool killed = false;
  int cases_to_kill = 0;       // the number of the first failing case (passing cases + 1); 0 when not killed
  std::size_t shrunk_size = 0; // size of the shrunk counterexample: sum over sequences of context_len, times query
                               // heads, times head_dim (0 when not killed)
  std::string shrunk_case;     // describe() of the shrunk problem
  std::string replay;          // the one-line replay command of the saved case
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
  std::vector<std::string> mutants;            // empty: every mutant
  std::function<void(const KillCell&)> progress;  // called after each cell
};

KillMatrix run_kill_matrix(const KillOptions& options);
nlohmann::json to_json(const KillMatrix& matrix);
// Mutants as rows, properties as columns; each cell the cases to the first kill, or '-' when it survived.
std::string format_matrix(const KillMatrix& matrix);

}  // namespace pacheck
