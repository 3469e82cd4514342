// Runs one property of the catalogue against one variant with explicit RapidCheck parameters (seed, case count),
// outside of gtest: `pacheck check`, the mutant kill matrix, the fuzzer and the reports use it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <rapidcheck/detail/Results.h>

#include "properties/catalogue.h"

namespace pacheck {

struct RunOptions {
  int cases = 100;
  std::uint64_t seed = 1;
  int max_size = 100;
  bool shrink = true;
  std::filesystem::path failure_dir = "pacheck-failures";
  std::string replay_program = "pacheck";
  // A RapidCheck reproduce string from an earlier failure: re-runs exactly the failing case.
  std::optional<std::string> reproduce;
  // Narrow the generator beyond the variant's capabilities (the reports run one dtype and one mode at a time).
  // Empty: every dtype / mode the variant supports. Naming only unsupported ones throws std::invalid_argument.
  std::vector<DType> only_dtypes;
  std::vector<Mode> only_modes;
  bool engine_shapes = false;  // gen::Limits::engine_shapes
  KernelPins pins;             // gen::Limits::pins
};

struct PropertyRun {
  std::string property;
  std::string variant;
  bool passed = false;
  bool gave_up = false;  // too many discarded cases
  int cases = 0;         // passing cases before the verdict (the failing case is number cases + 1)
  std::string failure;   // RapidCheck's message: counterexample and the property's own description
  std::string reproduce; // for --reproduce (empty when it passed)
};

// Throws std::invalid_argument when options.reproduce is not a reproduce string, or names this pair but cannot
// rebuild its case (a garbled payload).
PropertyRun run_property(const Property& property, const Variant& variant, const RunOptions& options,
                         const Observer& observer = {});

// A RapidCheck result that is not a success in plain words (cases passed, shrinks, the shrunk case by name, the
// property's own message without RapidCheck's source line and macro text); "" for a success. pacheck::test_main
// reports its failures with it, so a kernel project's ctest output reads as `pacheck check` does.
std::string describe_result(const rc::detail::TestResult& result);

// The RapidCheck seed a property runs with under RunOptions::seed: the seed mixed with the property's name, so
// the properties of one run draw different problems (the same seed would give every property the same cases).
std::uint64_t property_seed(std::uint64_t seed, const std::string& property);

// The command-line options that pin these choices, " --layout deep --merge warps" (empty when none is pinned), for
// the reproduce lines of failures.
std::string pin_arguments(const KernelPins& pins);

// The RapidCheck id of a (property, variant) pair, the key of its reproduce string.
std::string property_run_id(const std::string& property, const std::string& variant);

// The (property, variant) ids a reproduce string holds; std::invalid_argument when it is not a reproduce string.
std::vector<std::string> reproduce_ids(const std::string& reproduce);

}  // namespace pacheck
