// The property catalogue: named RapidCheck properties over one variant, shared by ctest, the kill matrix and
// `pacheck check`, `fuzz` and `report`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "oracle/oracle.h"
#include "problem/knobs.h"
#include "properties/agreement.h"
#include "properties/generators.h"
#include "variants/variant.h"

namespace pacheck {

// What a property saw on one passing or failing case, for summaries and reports.
struct CaseObservation {
  const std::string& property;
  const Problem& problem;
  const Knobs& knobs;
  const Agreement* agreement;  // null for properties that compare runs with each other
};
using Observer = std::function<void(const CaseObservation&)>;

struct PropertyContext {
  const Variant* variant = nullptr;
  Observer observer;                          // may be empty
  std::filesystem::path failure_dir = "pacheck-failures";
  std::string replay_program = "pacheck";     // how the replay line names the main executable
  gen::Limits limits;                         // narrowed to the variant's capabilities
};

struct Property {
  std::string name;  // CamelCase, used as the gtest name
  std::string what;  // one line
  std::function<bool(const Capabilities&)> applies;
  std::function<void(const PropertyContext&)> body;  // a RapidCheck property body: generates, then RC_ASSERTs
};

const std::vector<Property>& catalogue();
const Property& property_named(const std::string& name);

// The generator limits a variant's capabilities allow.
gen::Limits limits_for(const Capabilities& caps);

// Saves the failing case and returns the one-line replay command (written into the failure message).
std::string save_failure(const PropertyContext& ctx, const std::string& property, const Problem& problem,
                         const Knobs& knobs, const std::string& note);

}  // namespace pacheck
