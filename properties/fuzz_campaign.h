// The time-boxed fuzzer behind `pacheck fuzz`: runs the property catalogue against one variant, round after round
// with a fresh seed each round, until the time budget is spent or a property fails.
//
// Workers are processes, not threads. RapidCheck keeps its implicit parameters (the current generation context,
// the property's state) in process-global static stacks, so two properties checked at once in one process
// corrupt each other. Processes also give the fuzzer what an unattended run needs: a variant that crashes or
// hangs kills one worker, and the parent reports which property and seed were running and how to reproduce it.
// Worker w's round r uses seed `seed + r * jobs + w`, and the property catalogue()[(r * jobs + w) mod n] among
// the n properties that apply to the variant, so a failure's seed alone names its round.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "variants/variant.h"

namespace pacheck {

struct FuzzCampaignOptions {
  const Variant* variant = nullptr;
  double seconds = 60;
  std::uint64_t seed = 1;
  int jobs = 1;
  int cases_per_round = 20;
  bool keep_going = false;  // continue after a failure until the budget is spent
  bool engine_shapes = false;  // gen::Limits::engine_shapes
  std::filesystem::path failure_dir = "pacheck-failures/fuzz";
  std::string replay_program = "pacheck";
  // After the budget, a worker still inside a round (shrinking a failure, or a hung variant) gets this long to
  // finish before it is killed and reported.
  double grace_seconds = 120;
  // Asked in each worker (never in the parent, which must not initialise CUDA before it forks) when the variant
  // needs a GPU.
  std::function<bool(std::string* reason)> gpu_available;
};

struct FuzzFailure {
  std::string property;
  std::uint64_t seed = 0;
  int cases = 0;                    // cases of the round, the failing one included
  std::string message;              // RapidCheck's: the shrunk counterexample and the property's description
  std::string reproduce;            // RapidCheck reproduce string ("" after a crash or hang)
  std::vector<std::filesystem::path> case_files;  // saved by the property (replay with `pacheck replay`)
  std::string check_command;        // re-runs the failing round: `pacheck check ... --seed S --cases C`
};

struct FuzzProgress {
  double elapsed_seconds = 0;
  long long cases = 0;
  long long rounds = 0;
  int failures = 0;
  double cases_per_second() const { return elapsed_seconds > 0 ? cases / elapsed_seconds : 0; }
};

struct FuzzReport {
  FuzzProgress totals;
  std::map<std::string, long long> cases_per_property;
  std::map<std::string, int> gave_up_rounds;  // rounds RapidCheck abandoned (too many discarded cases)
  std::vector<FuzzFailure> failures;
  bool skipped = false;     // the variant needs a GPU and none answered
  std::string skip_reason;
};

// Throws std::invalid_argument for bad options (no variant, no budget, no property applies).
// `progress` is called about once a second and once at the end; `on_failure` as each failure arrives.
FuzzReport run_fuzz_campaign(const FuzzCampaignOptions& options,
                             const std::function<void(const FuzzProgress&)>& progress = {},
                             const std::function<void(const FuzzFailure&)>& on_failure = {});

}  // namespace pacheck
