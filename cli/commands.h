// The subcommands of the pacheck executable (an add_* function per file) and what they share.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/device_probe.h"
#include "variants/variant.h"

namespace pacheck::cli {

void add_commands(CLI::App& app);

void add_check_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_fuzz_command(CLI::App& app);
void add_mutants_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_gpus_command(CLI::App& app);

// The process exit code (CLI11 callbacks return nothing).
void set_exit_code(int code);
int exit_code();
// Prints "error: MESSAGE" on stderr and sets the exit code.
void fail(const std::string& message, int code = 2);

// The named variants (every non-mutant variant when `names` is empty); an unknown name throws CLI::ValidationError.
std::vector<const Variant*> select_variants(const std::vector<std::string>& names, bool include_mutants = false);

// --plugin PATH, repeatable: shared libraries whose variants join the run (plugin/README.md).
void add_plugin_option(CLI::App* command, std::vector<std::string>& plugins);
// Loads the plugins before the command selects its variants; one that cannot be loaded prints why, naming its
// path, and ends the command with exit status 2.
void load_plugins(const std::vector<std::string>& paths);
// " --plugin PATH" for a variant that came from a plugin (PATH absolute), "" for every other variant.
std::string plugin_arguments(const std::string& variant);
// `text` with plugin_arguments(variant) after each "--variant VARIANT", so its replay lines load the plugin.
std::string with_plugin_arguments(const std::string& text, const std::string& variant);

// Exact validators (CLI11 turns "-1" into 2^64-1 and calls "abc" out of range): decimal digits within [lo, hi];
// a finite number within [lo, hi].
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi);
CLI::Validator finite_number(double lo, double hi);

// `text` safe for the terminal: control characters but the line break become \xNN (terminal_safe).
std::string printable(std::string_view text);

// The candidate nearest to `word` by edit distance, or "" when none is near enough to be a likely typo.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);
// "; did you mean NAME?" (nearest_name), or "": the tail of an unknown-name error.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// --layout and --merge: the kernel choices every generated case pins (Knobs::pins).
void add_pin_options(CLI::App* command, KernelPins& pins);

}  // namespace pacheck::cli
