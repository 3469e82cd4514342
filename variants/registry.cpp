// The variant registry: registration, lookup by name, the variant and mutant lists, and coverage_gap.
#include <algorithm>
#include <stdexcept>

#include "variants/variant.h"

namespace pacheck {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(std::unique_ptr<Variant> variant) {
  if (find(variant->name()) != nullptr) throw std::logic_error("variant registered twice: " + variant->name());
  variants_.push_back(std::move(variant));
  std::ranges::sort(variants_, [](const auto& a, const auto& b) { return a->name() < b->name(); });
}

const Variant* Registry::find(const std::string& name) const {
  for (const auto& v : variants_)
    if (v->name() == name) return v.get();
  return nullptr;
}

const Variant& Registry::get(const std::string& name) const {
  if (const Variant* v = find(name)) return *v;
  std::string known;
  for (const auto& v : variants_) known += (known.empty() ? "" : ", ") + v->name();
  throw std::invalid_argument("unknown variant '" + name + "'; registered variants: " + known);
}

std::vector<const Variant*> Registry::variants(bool include_mutants) const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_)
    if (include_mutants || !v->capabilities().is_mutant) out.push_back(v.get());
  return out;
}

std::vector<const Variant*> Registry::mutants() const {
  std::vector<const Variant*> out = variants(true);
  std::erase_if(out, [](const Variant* v) { return !v->capabilities().is_mutant; });
  return out;
}

std::string logit_option_gap(const LogitOptionSupport& takes, const LogitOptions& o) {
  if (o.soft_cap && !takes.soft_cap) return "soft_cap not supported";
  if (o.window && !takes.window) return "window not supported";
  if (!o.alibi_slopes.empty() && !takes.alibi) return "alibi_slopes not supported";
  if (!o.sinks.empty() && !takes.sinks) return "sinks not supported";
  return "";
}

std::string fp8_cache_gap(const std::vector<Fp8Format>& takes, const Problem& problem) {
  if (!problem.fp8_cache || std::ranges::find(takes, problem.fp8_cache->format) != takes.end()) return "";
  return "kv_cache " + std::string(fp8_name(problem.fp8_cache->format)) + " not supported";
}

bool fp8_cache_shape_taken(const std::vector<DType>& query_dtypes, int head_dim_multiple, DType dtype, int head_dim) {
  const bool dtype_taken = query_dtypes.empty() || std::ranges::find(query_dtypes, dtype) != query_dtypes.end();
  return dtype_taken && head_dim_multiple > 0 && head_dim % head_dim_multiple == 0;
}

std::string fp8_cache_shape_gap(const Capabilities& caps, const Problem& problem) {
  if (!problem.fp8_cache ||
      fp8_cache_shape_taken(caps.fp8_query_dtypes, caps.fp8_head_dim_multiple, problem.dtype, problem.head_dim))
    return "";
  return "kv_cache " + std::string(fp8_name(problem.fp8_cache->format)) + " with dtype " +
         std::string(dtype_name(problem.dtype)) + " and head_dim " + std::to_string(problem.head_dim) + " not supported";
}

std::string coverage_gap(const Capabilities& caps, const Problem& problem) {
  if (std::ranges::find(caps.dtypes, problem.dtype) == caps.dtypes.end())
    return "dtype " + std::string(dtype_name(problem.dtype)) + " not supported";
  if (problem.head_dim > caps.max_head_dim || !caps.supports_head_dim(problem.head_dim))
    return "head_dim " + std::to_string(problem.head_dim) + " not supported";
  const auto listed = [](const std::vector<int>& allowed, int value) {
    return allowed.empty() || std::ranges::find(allowed, value) != allowed.end();
  };
  if (!listed(caps.block_sizes, problem.block_size))
    return "block_size " + std::to_string(problem.block_size) + " not supported";
  if (problem.num_kv_heads > 0 && !listed(caps.gqa_ratios, problem.num_query_heads / problem.num_kv_heads))
    return "GQA ratio " + std::to_string(problem.num_query_heads / problem.num_kv_heads) + " not supported";
  if (std::string gap = logit_option_gap(caps.logit_options, problem.options); !gap.empty()) return gap;
  if (std::string gap = fp8_cache_gap(caps.fp8_caches, problem); !gap.empty()) return gap;
  if (std::string gap = fp8_cache_shape_gap(caps, problem); !gap.empty()) return gap;
  for (int s = 0; s < static_cast<int>(problem.sequences.size()); ++s) {
    const Mode mode = problem.mode_of(s);
    if (std::ranges::find(caps.modes, mode) == caps.modes.end())
      return std::string("mode ") + mode_name(mode) + " not supported";
  }
  return "";
}

bool covers(const Capabilities& caps, const Problem& problem) { return coverage_gap(caps, problem).empty(); }

}  // namespace pacheck
