// Runs one property against one variant with explicit RapidCheck parameters, outside gtest: for `pacheck check`,
// the kill matrix, the fuzzer and the reports.
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
  // A RapidCheck reproduce string of an earlier failure: re-runs exactly its case.
  std::optional<std::string> reproduce;
  // Narrow the draw within the variant's capabilities (empty: all); naming only unsupported ones throws
  // std::invalid_argument.
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
  int cases = 0;          // passing cases before the verdict (the failing case is number cases + 1)
  std::string failure;    // RapidCheck's message: counterexample and the property's own description
  std::string reproduce;  // for --reproduce (empty when it passed)
};

// Throws std::invalid_argument when options.reproduce is no reproduce string, or cannot rebuild this pair's case.
PropertyRun run_property(const Property& property, const Variant& variant, const RunOptions& options,
                         const Observer& observer = {});

// A RapidCheck result in plain words (see failure_message in runner.cpp); "" for a success. pacheck::test_main
// reports failures with it.
std::string describe_result(const rc::detail::TestResult& result);

// A property's RapidCheck seed: RunOptions::seed mixed with its name, so properties draw different cases.
std::uint64_t property_seed(std::uint64_t seed, const std::string& property);

// The options that pin these choices, " --layout deep --merge warps" ("" for none), for reproduce lines.
std::string pin_arguments(const KernelPins& pins);

// The RapidCheck id of a (property, variant) pair, the key of its reproduce string.
std::string property_run_id(const std::string& property, const std::string& variant);

// The (property, variant) ids a reproduce string holds; std::invalid_argument when it is no reproduce string.
std::vector<std::string> reproduce_ids(const std::string& reproduce);

}  // namespace pacheck
