#include "properties/runner.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <rapidcheck.h>

namespace rc::detail {
// Shipped in librapidcheck but not declared in its installed headers.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace pacheck {

namespace {
// The runner reports results itself; RapidCheck's global listener would print reproduce strings at exit.
class QuietListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Keeps the entries of `supported` that `wanted` names (all of them when `wanted` is empty).
template <typename T, typename Name>
std::vector<T> narrowed(const std::vector<T>& supported, const std::vector<T>& wanted, const std::string& variant,
                        const char* what, Name name) {
  if (wanted.empty()) return supported;
  std::vector<T> kept;
  for (const T& x : supported)
    if (std::ranges::find(wanted, x) != wanted.end()) kept.push_back(x);
  if (kept.empty()) {
    std::string asked;
    for (const T& x : wanted) asked += (asked.empty() ? "" : ", ") + std::string(name(x));
    throw std::invalid_argument("variant " + variant + " supports none of the requested " + what + " (" + asked + ")");
  }
  return kept;
}

// A failure in plain words: how many cases passed, how far RapidCheck shrank, the shrunk case's generated values
// (problem spec, knobs) by what they are rather than by C++ type, then the property's own message without the
// source line and macro text RapidCheck puts before it.
std::string failure_message(const rc::detail::FailureResult& failure) {
  std::ostringstream m;
  m << "failed after " << failure.numSuccess << " passing case" << (failure.numSuccess == 1 ? "" : "s")
    << "; shrunk " << failure.reproduce.shrinkPath.size() << " times to:\n";
  for (const auto& [type, value] : failure.counterExample) {
    const std::string what = type == "pacheck::ProblemSpec" ? "problem"
                             : type == "pacheck::Knobs"     ? "knobs"
                                                            : type;
    m << "  " << what << ": " << value << "\n";
  }
  std::string description = failure.description;
  // "path/file.cpp:40:\nRC_FAIL(...)\n\nmessage": the message alone.
  const std::size_t first_line = description.find('\n');
  if (first_line != std::string::npos && first_line > 0 && description[first_line - 1] == ':') {
    const std::size_t body = description.find("\n\n", first_line);
    if (body != std::string::npos) description = description.substr(body + 2);
  }
  m << "\n" << description;
  return m.str();
}

std::unordered_map<std::string, rc::detail::Reproduce> parse_reproduce(const std::string& reproduce) {
  try {
    return rc::detail::stringToReproduceMap(reproduce);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("not a RapidCheck reproduce string: ") + e.what());
  }
}
}  // namespace

std::string pin_arguments(const KernelPins& pins) {
  std::string arguments;
  if (pins.layout != KernelLayout::automatic) arguments += std::string(" --layout ") + knob_name(pins.layout);
  if (pins.merge != MergeShape::automatic) arguments += std::string(" --merge ") + knob_name(pins.merge);
  return arguments;
}

std::uint64_t property_seed(std::uint64_t seed, const std::string& property) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the name, so the mix is the same on every platform
  for (unsigned char ch : property) h = (h ^ ch) * 0x100000001b3ull;
  return seed ^ h;
}

std::vector<std::string> reproduce_ids(const std::string& reproduce) {
  std::vector<std::string> ids;
  for (const auto& [id, unused] : parse_reproduce(reproduce)) ids.push_back(id);
  return ids;
}

std::string describe_result(const rc::detail::TestResult& result) {
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(failure)) return failure_message(failure);
  if (result.match(gave_up)) return "gave up after " + std::to_string(gave_up.numSuccess) + " passing cases: " + gave_up.description;
  if (result.match(error)) return "error: " + error.description;
  return "";
}

std::string property_run_id(const std::string& property, const std::string& variant) {
  return property + "/" + variant;
}

PropertyRun run_property(const Property& property, const Variant& variant, const RunOptions& options,
                         const Observer& observer) {
  PropertyContext ctx;
  ctx.variant = &variant;
  ctx.observer = observer;
  ctx.failure_dir = options.failure_dir;
  ctx.replay_program = options.replay_program;
  ctx.limits = limits_for(variant.capabilities());
  ctx.limits.dtypes = narrowed(ctx.limits.dtypes, options.only_dtypes, variant.name(), "dtypes", dtype_name);
  ctx.limits.modes = narrowed(ctx.limits.modes, options.only_modes, variant.name(), "modes", mode_name);
  ctx.limits.engine_shapes = options.engine_shapes;
  ctx.limits.pins = options.pins;

  rc::detail::TestMetadata metadata;
  metadata.id = property_run_id(property.name, variant.name());
  metadata.description = metadata.id;
  rc::detail::TestParams params;
  params.seed = property_seed(options.seed, property.name);
  params.maxSuccess = options.cases;
  params.maxSize = options.max_size;
  params.disableShrinking = !options.shrink;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce_map;
  if (options.reproduce) reproduce_map = parse_reproduce(*options.reproduce);
  QuietListener listener;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty([&] { property.body(ctx); }), metadata, params, listener, reproduce_map);

  PropertyRun run;
  run.property = property.name;
  run.variant = variant.name();
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(success)) {
    run.passed = true;
    run.cases = success.numSuccess;
  } else if (result.match(failure)) {
    run.cases = failure.numSuccess;
    run.failure = failure_message(failure);
    run.reproduce = rc::detail::reproduceMapToString({{metadata.id, failure.reproduce}});
  } else if (result.match(gave_up)) {
    run.gave_up = true;
    run.cases = gave_up.numSuccess;
    run.failure = "gave up: " + gave_up.description;
  } else if (result.match(error)) {
    // A reproduce string that parses but cannot rebuild its case (a garbled payload) would otherwise read as a
    // failure of the property: it is the string that is wrong.
    if (options.reproduce)
      throw std::invalid_argument("the string names " + metadata.id + " but does not rebuild its case (" +
                                  error.description + "): garbled, or from a build whose generators differ");
    run.failure = "error: " + error.description;
  }
  return run;
}

}  // namespace pacheck
