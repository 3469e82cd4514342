// The subcommands of the pacheck executable. Each add_* function lives in its own file and attaches one
// subcommand with its options and callback.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "variants/variant.h"

namespace pacheck::cli {

void add_commands(CLI::App& app);

void add_check_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_fuzz_command(CLI::App& app);
void add_mutants_command(CLI::App& app);
void add_report_command(CLI::App& app);

// Callbacks set the process exit code through this (CLI11 callbacks return nothing).
void set_exit_code(int code);
int exit_code();

// The variants named on the command line (every non-mutant variant when `names` is empty). An unknown name throws
// CLI::ValidationError naming the registered variants.
std::vector<const Variant*> select_variants(const std::vector<std::string>& names, bool include_mutants = false);

// Throws CLI::ValidationError when PACHECK_TENSOR_CORE_LAYOUT or PACHECK_SPLITK_MERGE holds a value the CUDA
// kernels do not know (cuda/kernel_pins.h), so that a typo in a pin is a usage error before anything runs.
void require_valid_kernel_pins();

// Whether a CUDA device can run the GPU variants; `reason` says why not. Checks the kernel pins first (above).
bool gpu_available(std::string* reason);

// `program` as the replay lines of failures must name it: with PACHECK_TENSOR_CORE_LAYOUT or PACHECK_SPLITK_MERGE
// set (they pin the CUDA tensor-core layout and the split-K merge's shape, cuda/kernel_pins.h) prefixed with
// them, so that a replay runs the same kernels.
std::string program_for_replay_lines(const std::string& program);

}  // namespace pacheck::cli
