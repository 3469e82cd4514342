// The knobs' choice names: one table per choice, read both ways.
#include "problem/knobs.h"

#include <array>
#include <utility>

namespace pacheck {
namespace {

constexpr std::array<std::pair<const char*, KernelLayout>, 4> kLayouts{{{"automatic", KernelLayout::automatic},
                                                                        {"deep", KernelLayout::deep},
                                                                        {"wide", KernelLayout::wide},
                                                                        {"wide-evict-first", KernelLayout::wide_evict_first}}};
constexpr std::array<std::pair<const char*, MergeShape>, 3> kMerges{
    {{"automatic", MergeShape::automatic}, {"lanes", MergeShape::lanes}, {"warps", MergeShape::warps}}};

template <typename Choice, std::size_t N>
const char* name_in(const std::array<std::pair<const char*, Choice>, N>& table, Choice choice) {
  for (const auto& [name, value] : table)
    if (value == choice) return name;
  return "automatic";
}
template <typename Choice, std::size_t N>
std::optional<Choice> parse_in(const std::array<std::pair<const char*, Choice>, N>& table, const std::string& text) {
  for (const auto& [name, value] : table)
    if (text == name) return value;
  return std::nullopt;
}
template <typename Choice, std::size_t N>
std::string names_in(const std::array<std::pair<const char*, Choice>, N>& table) {
  std::string names;
  for (const auto& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.first);
  return names;
}

}  // namespace

const char* knob_name(KernelLayout layout) { return name_in(kLayouts, layout); }
const char* knob_name(MergeShape merge) { return name_in(kMerges, merge); }
std::optional<KernelLayout> parse_kernel_layout(const std::string& name) { return parse_in(kLayouts, name); }
std::optional<MergeShape> parse_merge_shape(const std::string& name) { return parse_in(kMerges, name); }
std::string kernel_layout_names() { return names_in(kLayouts); }
std::string merge_shape_names() { return names_in(kMerges); }

std::string knobs_text(const Knobs& knobs) {
  std::string text = "tile_size=" + std::to_string(knobs.tile_size) + " split_size=" + std::to_string(knobs.split_size) +
                     " num_splits=" + std::to_string(knobs.num_splits);
  if (knobs.pins.layout != KernelLayout::automatic) text += std::string(" layout=") + knob_name(knobs.pins.layout);
  if (knobs.pins.merge != MergeShape::automatic) text += std::string(" merge=") + knob_name(knobs.pins.merge);
  return text;
}

}  // namespace pacheck
