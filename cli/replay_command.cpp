// pacheck replay FILE [--variant NAME]: re-runs a saved case against one or every variant and prints the
// comparison with the oracle. Exits non-zero when any variant exceeds its bound.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "cli/commands.h"
#include "problem/case_file.h"
#include "properties/agreement.h"

namespace pacheck::cli {
namespace {

struct ReplayOptions {
  std::string file;
  std::vector<std::string> variants;
  bool include_mutants = false;
  int tile_size = 0;
  int split_size = 0;
  std::vector<std::string> plugins;
};

void run_replay(const ReplayOptions& o) {
  load_plugins(o.plugins);
  Case c;
  try {
    c = read_case_file(o.file);
  } catch (const CaseFileError& e) {
    return fail(printable(e.what()));
  }
  // A case past the oracle's limits is refused before anything of its size is computed or allocated.
  if (const std::string limit = oracle_limit_error(c.problem); !limit.empty())
    return fail(printable(o.file) + ": " + limit);
  if (o.tile_size > 0) c.knobs.tile_size = o.tile_size;
  if (o.split_size > 0) c.knobs.split_size = o.split_size;
  const std::vector<const Variant*> variants = select_variants(o.variants, o.include_mutants || !o.variants.empty());
  // The note's lines (a fuzzer's note is its whole report) under "note:", indented.
  std::string note = printable(c.note);
  for (std::size_t at = note.find('\n'); at != std::string::npos; at = note.find('\n', at + 1))
    note.insert(at + 1, "        ");
  std::cout << "case " << printable(o.file) << (note.empty() ? "" : "\n  note: " + note) << "\n" << describe(c.problem)
            << "knobs: " << knobs_text(c.knobs) << "\n";
  // A long case reports the oracle's progress on stderr every two seconds.
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  const OracleProgress progress = [&](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(2)) return;
    last = now;
    std::fprintf(stderr, "oracle: %zu of %zu rows, %.0f s\n", done, total,
                 std::chrono::duration<double>(now - start).count());
  };
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs), progress);
  if (!oracle.fits_fp32) std::cout << "note: the problem overflows fp32 ranges or reads an inf or NaN; no variant's error model covers it\n";
  std::string gpu_reason;
  const bool gpu = cuda_device_available(&gpu_reason);
  bool all_ok = true;
  for (const Variant* v : variants) {
    const std::string gap = coverage_gap(v->capabilities(), c.problem);
    if (!gap.empty() || (v->capabilities().needs_gpu && !gpu)) {
      std::printf("%-24s skipped: %s\n", v->name().c_str(), gap.empty() ? gpu_reason.c_str() : gap.c_str());
      continue;
    }
    Output out;
    try {
      out = v->run(c.problem, c.knobs);
    } catch (const std::exception& e) {  // a kernel fault (a mutant's emulated illegal address, a CUDA error)
      std::printf("%-24s FAIL  the kernel failed: %s\n", v->name().c_str(), e.what());
      all_ok = false;
      continue;
    }
    const Agreement a = compare_with_oracle(c.problem, oracle, *v, c.knobs, out);
    std::printf("%-24s %s  worst %.3g ulps, %.3g of bound\n", v->name().c_str(), a.ok ? "pass" : "FAIL", a.worst_ulps,
                a.worst.normalized());
    if (!a.ok) {
      all_ok = false;
      std::cout << describe_failure(c.problem, *v, c.knobs, a);
    }
  }
  set_exit_code(all_ok ? 0 : 1);
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand("replay", "Re-run a saved case file against one or every variant");
  cmd->add_option("file", options->file, "The case file")->required();
  cmd->add_option("--variant", options->variants, "Variant(s) to run (default: every non-mutant variant)");
  cmd->add_flag("--mutants", options->include_mutants, "With no --variant: include the mutants");
  cmd->add_option("--tile-size", options->tile_size, "Override the case's tile size")
      ->check(whole_number(1, 1 << 20))
      ->default_str("the case's");
  cmd->add_option("--split-size", options->split_size, "Override the case's split size")
      ->check(whole_number(1, 1 << 20))
      ->default_str("the case's");
  add_plugin_option(cmd, options->plugins);
  cmd->callback([options] { run_replay(*options); });
}

}  // namespace pacheck::cli
