// The kernel pins (kernel_pins.h): a process-wide pin, else an environment variable, per choice.
#include "cuda/kernel_pins.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace pacheck::cuda {

namespace {

// One pinnable choice: pinned for the process, else read from the environment variable `variable` at each call.
// `names` lists the choices other than automatic, which is also what an empty or absent variable means.
// Its constructor is constexpr, so the globals below are constant-initialised (C++17 has no constinit to say so):
// no static initialiser elsewhere can see one unconstructed.
template <typename Choice, std::size_t N>
class PinnableChoice {
 public:
  constexpr PinnableChoice(const char* variable, std::array<std::pair<const char*, Choice>, N> names)
      : variable_(variable), names_(names) {}
  void pin(Choice choice) {
    pinned_choice_.store(choice);
    pinned_.store(true);
  }
  Choice current() const { return pinned_.load() ? pinned_choice_.load() : from_environment(); }
  // "NAME=value " for `choice`, and for the variable as the environment holds it (empty when unset or empty).
  std::string assignment(Choice choice) const { return std::string(variable_) + "=" + name_of(choice) + " "; }
  std::string assignment_from_environment() const {
    const char* value = std::getenv(variable_);
    return value == nullptr || *value == '\0' ? std::string() : std::string(variable_) + "=" + value + " ";
  }

 private:
  Choice from_environment() const {
    const char* value = std::getenv(variable_);
    if (value == nullptr || std::string(value).empty() || std::string(value) == "automatic") return Choice::automatic;
    std::string allowed;
    for (const auto& [name, choice] : names_) {
      if (std::string(value) == name) return choice;
      allowed += std::string(name) + ", ";
    }
    throw std::invalid_argument(std::string(variable_) + " must be " + allowed + "or automatic, not '" + value + "'");
  }
  const char* name_of(Choice choice) const {
    for (const auto& [name, named] : names_)
      if (named == choice) return name;
    return "automatic";
  }
  const char* variable_;
  std::array<std::pair<const char*, Choice>, N> names_;
  std::atomic<bool> pinned_{false};
  std::atomic<Choice> pinned_choice_{Choice::automatic};
};

PinnableChoice<TensorCoreLayoutChoice, 4> g_layout("PACHECK_TENSOR_CORE_LAYOUT",
                                                   {{{"deep", TensorCoreLayoutChoice::deep},
                                                     {"wide", TensorCoreLayoutChoice::wide},
                                                     {"wide-evict-first", TensorCoreLayoutChoice::wide_evict_first},
                                                     {"wide-kv-tma", TensorCoreLayoutChoice::wide_kv_tma}}});
PinnableChoice<MergeShapeChoice, 2> g_merge_shape(
    "PACHECK_SPLITK_MERGE", {{{"lanes", MergeShapeChoice::lanes}, {"warps", MergeShapeChoice::warps}}});

}  // namespace

void pin_tensor_core_layout(TensorCoreLayoutChoice choice) { g_layout.pin(choice); }
void pin_merge_shape(MergeShapeChoice choice) { g_merge_shape.pin(choice); }
TensorCoreLayoutChoice pinned_tensor_core_layout() { return g_layout.current(); }
MergeShapeChoice pinned_merge_shape() { return g_merge_shape.current(); }

void check_kernel_pins() {
  pinned_tensor_core_layout();
  pinned_merge_shape();
}

std::string replay_prefix_from_environment() {
  return g_layout.assignment_from_environment() + g_merge_shape.assignment_from_environment();
}
std::string replay_prefix_for(TensorCoreLayoutChoice layout, MergeShapeChoice merge) {
  return g_layout.assignment(layout) + g_merge_shape.assignment(merge);
}

}  // namespace pacheck::cuda
