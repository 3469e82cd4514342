// libFuzzer target: bytes -> a valid, small problem (properties/problem_decoder.h) -> every CPU variant within its
// error bound of the oracle, and unchanged (bit-identical, NaN-free) when every unreferenced slot holds poison.
// A violation is printed, saved as a case file (in $PACHECK_FUZZ_FAILURE_DIR, default the working directory) with
// its replay command, and trapped, so libFuzzer saves the input as crash-*. PACHECK_FUZZ_VARIANTS=name[,name...]
// restricts the run to those variants (mutants allowed).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "problem/case_file.h"
#include "properties/agreement.h"
#include "properties/problem_decoder.h"
#include "variants/variant.h"

namespace {

using namespace pacheck;

std::vector<const Variant*> g_variants;

std::vector<const Variant*> variants_to_fuzz() {
  std::vector<const Variant*> out;
  const char* names = std::getenv("PACHECK_FUZZ_VARIANTS");
  if (names == nullptr || *names == '\0') {
    for (const Variant* v : Registry::instance().variants())
      if (!v->capabilities().needs_gpu) out.push_back(v);
    return out;
  }
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    try {
      const Variant& v = Registry::instance().get(name);
      if (v.capabilities().needs_gpu) throw std::invalid_argument(name + " needs a GPU; this target runs CPU variants");
      out.push_back(&v);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "PACHECK_FUZZ_VARIANTS: %s\n", e.what());
      std::exit(2);
    }
  }
  return out;
}

[[noreturn]] void report_and_trap(const std::string& what, const Problem& problem, const Knobs& knobs,
                                  const Variant& variant) {
  std::string dir = ".";
  if (const char* env = std::getenv("PACHECK_FUZZ_FAILURE_DIR"); env != nullptr && *env != '\0') dir = env;
  const std::string path = dir + "/structured_problem-" + variant.name() + ".json";
  std::string replay;
  try {
    write_case_file(path, Case{problem, knobs, "structured_problem_fuzzer failed on " + variant.name() + ": " + what});
    replay = "replay: pacheck replay " + path + " --variant " + variant.name();
  } catch (const std::exception& e) {
    replay = std::string("(could not save the case: ") + e.what() + ")";
  }
  std::cerr << "\n=== structured_problem_fuzzer: " << variant.name() << " " << what << "\n" << replay << "\n";
  std::cerr.flush();
  __builtin_trap();
}

std::string first_difference(const Problem& p, const Output& clean, const Output& poisoned) {
  if (clean.size() != poisoned.size()) return "output sizes differ";
  for (std::size_t i = 0; i < clean.size(); ++i) {
    if (std::memcmp(&clean[i], &poisoned[i], sizeof(float)) != 0 || (std::isnan(poisoned[i]) && !std::isnan(clean[i]))) {
      std::ostringstream out;
      out.precision(10);
      out << element_position(p, i) << ": clean " << clean[i] << ", poisoned " << poisoned[i];
      return out.str();
    }
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_variants = variants_to_fuzz();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const DecodedProblem decoded = decode_problem(data, size);
  const Problem clean = build_problem(decoded, Poison::none);
  const Problem poisoned = build_problem(decoded, decoded.poison);
  const Knobs& knobs = decoded.knobs;
  // The decoder guarantees a valid problem; run_oracle validates again, throwing (a crash) if not.
  const OracleResult oracle = run_oracle(poisoned, oracle_split_sizes(poisoned, knobs));
  for (const Variant* v : g_variants) {
    const Capabilities caps = v->capabilities();
    if (!covers(caps, poisoned)) continue;
    const Output out = v->run(poisoned, knobs);
    // Problems overflowing fp32 lie outside every error model; the masked-lane check still holds.
    if (oracle.fits_fp32) {
      const Agreement a = compare_with_oracle(poisoned, oracle, *v, knobs, out);
      if (!a.ok) report_and_trap("exceeds its error bound\n" + describe_failure(poisoned, *v, knobs, a), poisoned, knobs, *v);
    }
    if (!caps.deterministic) continue;  // bit-identity needs a deterministic kernel
    const Output clean_out = v->run(clean, knobs);
    const std::string diff = first_difference(poisoned, clean_out, out);
    if (!diff.empty())
      report_and_trap(std::string("changed its output when the unreferenced slots were poisoned (") +
                          poison_name(decoded.poison) +
                          "): it reads them, or it is not deterministic as it claims\n" + describe(poisoned) +
                          "first difference: " + diff,
                      poisoned, knobs, *v);
  }
  return 0;
}
