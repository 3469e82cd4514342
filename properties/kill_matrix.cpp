#include "properties/kill_matrix.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <rapidcheck.h>

#include "properties/catalogue.h"
#include "properties/fuzz_campaign.h"
#include "properties/property_steps.h"
#include "properties/runner.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

// A case a property worked on, as the matrix records it.
struct SeenCase {
  std::size_t size = 0;
  std::string description;
};

std::size_t problem_size(const Problem& p) {
  std::size_t keys = 0;
  for (const Sequence& s : p.sequences) keys += static_cast<std::size_t>(s.context_len);
  return keys * static_cast<std::size_t>(p.num_query_heads) * static_cast<std::size_t>(p.head_dim);
}

// Follows one property run: the case of the current invocation, and of the last failing one, which is the shrunk
// counterexample (shrinking adopts each candidate that still fails; kill_matrix_test checks it by replaying).
struct CaseTracker {
  std::optional<SeenCase> current, last_failure;
  void saw(const Problem& p, const Knobs& k) {
    current = SeenCase{problem_size(p), describe(p) + steps::knobs_line(k)};
  }
};

// The mutant, telling the tracker the problem it throws on (an emulated illegal address), which no property observes.
class TrackedVariant final : public ForwardingVariant {
 public:
  TrackedVariant(const Variant& inner, CaseTracker& tracker) : ForwardingVariant(inner), tracker_(tracker) {}
  Output run(const Problem& problem, const Knobs& knobs) const override {
    try {
      return inner_.run(problem, knobs);
    } catch (...) {
      tracker_.saw(problem, knobs);
      throw;
    }
  }

 private:
  CaseTracker& tracker_;
};

// The property reporting each invocation to the tracker: a RapidCheck failure or any exception but a discard fails it.
Property tracked(const Property& property, CaseTracker& tracker) {
  Property p = property;
  p.body = [&property, &tracker](const PropertyContext& ctx) {
    tracker.current.reset();
    try {
      property.body(ctx);
    } catch (const rc::detail::CaseResult& result) {
      if (result.type == rc::detail::CaseResult::Type::Failure) tracker.last_failure = tracker.current;
      throw;
    } catch (const rc::GenerationFailure&) {
      throw;
    } catch (...) {
      tracker.last_failure = tracker.current;
      throw;
    }
  };
  return p;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<const Variant*> selected_mutants(const std::vector<std::string>& names, bool gpu) {
  const std::vector<const Variant*> all = matrix_mutants(gpu);
  if (names.empty()) return all;
  std::vector<std::string> known;
  for (const Variant* m : all) known.push_back(m->name());
  std::vector<const Variant*> out;
  for (const std::string& name : names) {
    const auto it = std::ranges::find_if(all, [&](const Variant* m) { return m->name() == name; });
    if (it == all.end()) {
      const bool is_variant = Registry::instance().find(name) != nullptr;
      throw std::invalid_argument("'" + name + "' is " +
                                  (is_variant ? "a variant, not a " : std::string("no known ")) +
                                  (gpu ? "GPU mutant" : "mutant") + "; mutants: " + joined(known));
    }
    if (std::ranges::find(out, *it) == out.end()) out.push_back(*it);
  }
  return out;
}

// The `pacheck replay ...` line a property wrote into its failure message, if any.
std::string case_file_replay_line(const std::string& failure, const std::string& program) {
  const std::string marker = "replay: " + program + " replay ";
  const std::size_t at = failure.rfind(marker);
  if (at == std::string::npos) return "";
  const std::size_t start = at + std::string("replay: ").size();
  const std::size_t end = failure.find('\n', start);
  return failure.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

KillCell run_cell(const Variant& mutant, const Property& property, const KillOptions& options,
                  const std::optional<std::string>& reproduce = std::nullopt) {
  KillCell cell;
  cell.mutant = mutant.name();
  cell.property = property.name;
  cell.applicable = property.applies(mutant.capabilities());
  if (!cell.applicable) return cell;

  CaseTracker tracker;
  const TrackedVariant variant(mutant, tracker);
  RunOptions run_options;
  run_options.cases = options.cases;
  run_options.seed = options.seed;
  run_options.failure_dir = options.failure_dir;
  run_options.replay_program = options.replay_program;
  run_options.reproduce = reproduce;
  const PropertyRun run = run_property(tracked(property, tracker), variant, run_options,
                                       [&tracker](const CaseObservation& o) { tracker.saw(o.problem, o.knobs); });
  if (run.passed) return cell;
  cell.failure = run.failure;
  if (run.gave_up || run.reproduce.empty()) return cell;  // gave up, or RapidCheck failed: no kill

  cell.killed = true;
  cell.cases_to_kill = run.cases + 1;
  cell.reproduce = run.reproduce;
  if (const std::optional<SeenCase>& shrunk = tracker.last_failure) {
    cell.shrunk_size = shrunk->size;
    cell.shrunk_case = shrunk->description;
  } else {
    cell.shrunk_case = "(the property failed before it ran a case it could report; see the failure message)\n";
  }
  cell.replay = options.replay_program + " check --variant " + mutant.name() + " --property " + property.name +
                " --seed " + std::to_string(options.seed) + " --reproduce " + run.reproduce;
  cell.case_file_replay = case_file_replay_line(run.failure, options.replay_program);
  return cell;
}

// CamelCase initials: UlpBoundedAgreement -> UBA. Made unique by a suffix where two collide.
std::vector<std::string> column_labels(const std::vector<std::string>& properties) {
  std::vector<std::string> labels;
  for (const std::string& name : properties) {
    std::string label;
    for (char c : name)
      if (c >= 'A' && c <= 'Z') label += c;
    if (label.empty()) label = name.substr(0, 4);
    std::string unique = label;
    for (int n = 2; std::ranges::find(labels, unique) != labels.end(); ++n)
      unique = label + std::to_string(n);
    labels.push_back(unique);
  }
  return labels;
}

}  // namespace

std::vector<const Variant*> matrix_mutants(bool gpu) {
  std::vector<const Variant*> out;
  for (const Variant* m : Registry::instance().mutants())
    if (m->capabilities().needs_gpu == gpu && m->name().rfind("gpu_mutant_none_", 0) != 0) out.push_back(m);
  return out;
}

KillMatrix run_kill_matrix(const KillOptions& options) {
  const std::vector<const Variant*> mutants = selected_mutants(options.mutants, options.gpu);
  KillMatrix matrix;
  matrix.cases_per_property = options.cases;
  matrix.seed = options.seed;
  for (const Property& p : catalogue()) matrix.properties.push_back(p.name);
  for (const Variant* mutant : mutants) {
    matrix.mutants.push_back(mutant->name());
    for (const Property& property : catalogue()) {
      matrix.cells.push_back(run_cell(*mutant, property, options));
      if (options.progress) options.progress(matrix.cells.back());
    }
  }
  return matrix;
}

KillCell replay_kill(const KillCell& cell, const KillOptions& options) {
  if (!cell.killed) throw std::invalid_argument(cell.mutant + " survived " + cell.property + ": nothing to replay");
  const std::vector<const Variant*> mutant = selected_mutants({cell.mutant}, options.gpu);
  return run_cell(*mutant.front(), property_named(cell.property), options, cell.reproduce);
}

namespace {
// The properties that killed mutant i, and in `best` the fewest cases any of them needed (0: none killed it).
std::vector<std::string> killers_of(const KillMatrix& m, std::size_t i, int& best) {
  best = 0;
  std::vector<std::string> killers;
  for (std::size_t j = 0; j < m.properties.size(); ++j) {
    const KillCell& c = m.at(i, j);
    if (!c.killed) continue;
    killers.push_back(c.property);
    if (best == 0 || c.cases_to_kill < best) best = c.cases_to_kill;
  }
  return killers;
}
}  // namespace

KillSummary summarize(const KillMatrix& m) {
  KillSummary s;
  std::vector<bool> property_killed(m.properties.size(), false);
  for (std::size_t i = 0; i < m.mutants.size(); ++i) {
    int best = 0;
    const std::vector<std::string> killers = killers_of(m, i, best);
    for (std::size_t j = 0; j < m.properties.size(); ++j) property_killed[j] = property_killed[j] || m.at(i, j).killed;
    if (killers.empty()) {
      s.survivors.push_back(m.mutants[i]);
      continue;
    }
    ++s.killed_mutants;
    if (killers.size() == 1) s.single_kills.emplace_back(m.mutants[i], killers.front());
    s.cases_to_first_kill.push_back(best);
    if (best > s.worst_cases_to_first_kill) {
      s.worst_cases_to_first_kill = best;
      s.slowest_mutant = m.mutants[i];
    }
  }
  for (std::size_t j = 0; j < m.properties.size(); ++j)
    if (!property_killed[j]) s.idle_properties.push_back(m.properties[j]);
  std::vector<int> sorted = s.cases_to_first_kill;
  std::ranges::sort(sorted);
  if (!sorted.empty()) {
    const std::size_t n = sorted.size();
    s.median_cases_to_first_kill = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  }
  return s;
}

std::string format_matrix(const KillMatrix& m) {
  const std::vector<std::string> labels = column_labels(m.properties);
  std::size_t row_width = 6;
  for (const std::string& name : m.mutants) row_width = std::max(row_width, name.size());
  std::ostringstream out;
  char buffer[64];
  out << std::string(row_width, ' ');
  for (const std::string& label : labels) {
    std::snprintf(buffer, sizeof buffer, " %5s", label.c_str());
    out << buffer;
  }
  out << "  kills\n";
  for (std::size_t i = 0; i < m.mutants.size(); ++i) {
    out << m.mutants[i] << std::string(row_width - m.mutants[i].size(), ' ');
    int kills = 0;
    for (std::size_t j = 0; j < m.properties.size(); ++j) {
      const KillCell& c = m.at(i, j);
      const std::string cell = !c.applicable ? "." : c.killed ? std::to_string(c.cases_to_kill) : "-";
      kills += c.killed ? 1 : 0;
      std::snprintf(buffer, sizeof buffer, " %*s", static_cast<int>(std::max<std::size_t>(5, labels[j].size())),
                    cell.c_str());
      out << buffer;
    }
    out << "  " << kills << "\n";
  }
  out << "cells: the case on which the property first failed (of " << m.cases_per_property << ", seed " << m.seed
      << "); '-' survived, '.' does not apply\n";
  for (std::size_t j = 0; j < m.properties.size(); ++j)
    out << (j ? ", " : "") << labels[j] << " = " << m.properties[j];
  out << "\n";
  return out.str();
}

std::string format_summary(const KillMatrix& m) {
  const KillSummary s = summarize(m);
  std::ostringstream out;
  out << "mutants killed: " << s.killed_mutants << " of " << m.mutants.size() << "\n";
  if (!s.cases_to_first_kill.empty())
    out << "cases to the first kill (per mutant, its fastest property): median " << s.median_cases_to_first_kill
        << ", worst " << s.worst_cases_to_first_kill << " (" << s.slowest_mutant << ")\n";
  out << "killed by one property only:";
  if (s.single_kills.empty()) out << " none";
  for (const auto& [mutant, property] : s.single_kills) out << "\n  " << mutant << " (" << property << ")";
  out << "\n";
  if (!s.survivors.empty()) out << "SURVIVORS: " << joined(s.survivors) << "\n";
  if (!s.idle_properties.empty()) out << "properties that killed nothing: " << joined(s.idle_properties) << "\n";
  return out.str();
}

nlohmann::json to_json(const KillMatrix& m) {
  nlohmann::json cells = nlohmann::json::array();
  for (const KillCell& c : m.cells) {
    nlohmann::json j = {{"mutant", c.mutant}, {"property", c.property}, {"applicable", c.applicable},
                        {"killed", c.killed}};
    if (c.killed) {
      j["cases_to_kill"] = c.cases_to_kill;
      j["shrunk_size"] = c.shrunk_size;
      j["shrunk_case"] = c.shrunk_case;
      j["replay"] = c.replay;
      j["reproduce"] = c.reproduce;
      if (!c.case_file_replay.empty()) j["case_file_replay"] = c.case_file_replay;
    }
    if (!c.failure.empty()) j["failure"] = c.failure;
    cells.push_back(std::move(j));
  }
  const KillSummary s = summarize(m);
  nlohmann::json single = nlohmann::json::array();
  for (const auto& [mutant, property] : s.single_kills) single.push_back({{"mutant", mutant}, {"property", property}});
  nlohmann::json per_mutant = nlohmann::json::array();
  for (std::size_t i = 0; i < m.mutants.size(); ++i) {
    int first = 0;
    const std::vector<std::string> killers = killers_of(m, i, first);
    per_mutant.push_back({{"mutant", m.mutants[i]}, {"killed_by", killers},
                          {"cases_to_first_kill", first ? nlohmann::json(first) : nlohmann::json(nullptr)}});
  }
  return {{"seed", m.seed},
          {"cases_per_property", m.cases_per_property},
          {"per_mutant", std::move(per_mutant)},
          {"mutants", m.mutants},
          {"properties", m.properties},
          {"cells", std::move(cells)},
          {"summary",
           {{"killed_mutants", s.killed_mutants},
            {"survivors", s.survivors},
            {"idle_properties", s.idle_properties},
            {"single_kills", std::move(single)},
            {"median_cases_to_first_kill", s.median_cases_to_first_kill},
            {"worst_cases_to_first_kill", s.worst_cases_to_first_kill},
            {"slowest_mutant", s.slowest_mutant}}}};
}

}  // namespace pacheck
