// The pieces the subcommands share: the exit code, variant selection, plugins, validators, the kernel pins.
#include "cli/commands.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "plugin/plugin_loader.h"
#include "problem/case_file.h"

namespace pacheck::cli {
namespace {
int g_exit_code = 0;
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void fail(const std::string& message, int code) {
  std::cerr << "error: " << message << "\n";
  set_exit_code(code);
}

void add_commands(CLI::App& app) {
  add_check_command(app);
  add_list_command(app);
  add_replay_command(app);
  add_fuzz_command(app);
  add_mutants_command(app);
  add_report_command(app);
  add_gpus_command(app);
}

std::vector<const Variant*> select_variants(const std::vector<std::string>& names, bool include_mutants) {
  if (names.empty()) return Registry::instance().variants(include_mutants);
  std::vector<const Variant*> out;
  for (const std::string& name : names) {
    try {
      out.push_back(&Registry::instance().get(name));
    } catch (const std::invalid_argument& e) {
      std::vector<std::string> known;
      for (const Variant* v : Registry::instance().variants(true)) known.push_back(v->name());
      throw CLI::ValidationError("--variant", e.what() + did_you_mean(name, known));
    }
  }
  return out;
}

CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const auto digits_from = [&text](std::size_t from) {
          const auto digit = [](char c) { return c >= '0' && c <= '9'; };
          return text.size() > from && std::all_of(text.begin() + from, text.end(), digit);
        };
        // "-1" is a whole number below the range, not a non-number (CLI11 would wrap it to 2^64-1).
        const bool negative = text[0] == '-' && digits_from(1);
        if (!negative && !digits_from(0)) return "'" + text + "' is not a whole number (decimal digits only)";
        std::uint64_t value = 0;
        const bool overflow = std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc();
        if (negative || overflow || value < lo || value > hi) return "'" + text + "' is outside " + range;
        return "";
      },
      "[" + range + "]");
}

CLI::Validator finite_number(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || text.find_first_of("xXpP") != std::string::npos)
          return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        if (value < lo || value > hi) {
          char range[64];
          std::snprintf(range, sizeof range, "%g to %g", lo, hi);
          return "'" + text + "' is outside " + range;
        }
        return "";
      },
      "NUMBER");
}

std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t from = 0; from <= text.size();) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    out += terminal_safe(text.substr(from, end - from));
    if (end < text.size()) out += '\n';
    from = end + 1;
  }
  return out;
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  // Levenshtein distance; a candidate within a third of the word's length (at least 1, at most 3 edits) is a
  // likely typo, and a tie keeps the first.
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  const std::size_t allowed = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t d = distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string near = nearest_name(word, candidates);
  return near.empty() ? "" : "; did you mean " + near + "?";
}

void add_plugin_option(CLI::App* command, std::vector<std::string>& plugins) {
  command->add_option("--plugin", plugins,
                      "A shared library of variants (include/pacheck/plugin.h) to load first; repeatable");
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    try {
      load_plugin(path);
    } catch (const PluginError& e) {
      std::cerr << "error: " << printable(e.what()) << "\n";
      throw CLI::RuntimeError(2);  // the message is out; CLI11 prints nothing more for a RuntimeError
    }
  }
}

std::string plugin_arguments(const std::string& variant) {
  const LoadedPlugin* plugin = plugin_of(variant);
  return plugin ? " --plugin " + plugin->path : "";
}

std::string with_plugin_arguments(const std::string& text, const std::string& variant) {
  const std::string arguments = plugin_arguments(variant);
  if (arguments.empty()) return text;
  const std::string option = "--variant " + variant;
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
    const std::size_t end = at + option.size();
    const bool whole_word = end == text.size() || text[end] == ' ' || text[end] == '\n';
    if (!whole_word) continue;
    out.append(text, from, end - from);
    out += arguments;
    from = end;
  }
  return out + text.substr(from);
}

void add_pin_options(CLI::App* command, KernelPins& pins) {
  const auto pin = [command](const char* option, auto& pinned, auto parse, const std::string& names, const char* help) {
    const auto check = [parse, names](std::string& value) {
      return parse(value) ? std::string() : "'" + value + "' is not one of " + names;
    };
    const auto set = [&pinned, parse](const std::string& v) { pinned = *parse(v); };
    command->add_option_function<std::string>(option, set, help)
        ->check(CLI::Validator(check, "{" + names + "}"))
        ->default_str("automatic");
  };
  pin("--layout", pins.layout, parse_kernel_layout, kernel_layout_names(),
      "Pin the kernel layout where a variant chooses one (the CUDA tensor-core kernel at head dims 65-128)");
  pin("--merge", pins.merge, parse_merge_shape, merge_shape_names(),
      "Pin the split-K merge's thread shape where a variant chooses one (cuda_splitk)");
}

}  // namespace pacheck::cli
