// The GPU mutants (cuda/mutants/, ctest label gpu): a well-formed table registered whole, bug-free forms
// bit-identical to the production variants over their draws, and every mutant killed by the catalogue at the default
// case count and seed (the GPU kill matrix). The device tests skip, saying why, without a CUDA device.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstring>
#include <iostream>
#include <set>
#include <string>

#include "cuda/mutants/gpu_mutants.h"
#include "properties/catalogue.h"
#include "properties/generators.h"
#include "properties/kill_matrix.h"
#include "tests/fixtures/property_in_gtest.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

using cuda::mutants::GpuMutantSpec;

std::string variant_name(const GpuMutantSpec& row) { return "gpu_mutant_" + std::string(row.name); }

TEST(GpuMutantCatalogue, EveryBugIsOneRegisteredRowThatSaysWhatItBreaksAndWhy) {
  std::set<std::string_view> names;
  std::vector<int> uses(static_cast<std::size_t>(cuda::GpuBug::count), 0);
  for (const GpuMutantSpec& row : cuda::mutants::gpu_mutant_catalogue()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_TRUE(names.insert(row.name).second) << "the name is used by two rows";
    EXPECT_FALSE(row.bug_description.empty());
    EXPECT_EQ(row.bug_description.find('\n'), std::string_view::npos) << "the description is one line";
    EXPECT_FALSE(row.bug_class.empty());
    ++uses[static_cast<std::size_t>(row.bug)];
    const Variant* v = Registry::instance().find(variant_name(row));
    ASSERT_NE(v, nullptr) << "not registered";
    EXPECT_TRUE(v->capabilities().is_mutant);
    EXPECT_TRUE(v->capabilities().needs_gpu);
  }
  EXPECT_EQ(uses[0], 0) << "a mutant without a bug is a correct kernel";
  for (std::size_t b = 1; b < uses.size(); ++b) EXPECT_EQ(uses[b], 1) << "GpuBug value " << b;
  // The matrix runs exactly the rows, never the bug-free forms, and the CPU matrix none of them.
  EXPECT_EQ(matrix_mutants(true).size(), cuda::mutants::gpu_mutant_catalogue().size());
  for (const Variant* v : matrix_mutants(false)) EXPECT_FALSE(v->capabilities().needs_gpu) << v->name();
}

bool bit_identical(const Output& a, const Output& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Each bug-free form runs the mutants' launch path (their pinned instantiations, the merge's shape) with
// GpuBug::none: over its whole draw it gives the production variant's bits.
TEST(GpuMutants, BugFreeFormsAreBitIdenticalToProduction) {
  PACHECK_SKIP_WITHOUT_GPU();
  for (const GpuMutantSpec& row : cuda::mutants::gpu_mutant_bug_free_forms()) {
    const Variant& bug_free = Registry::instance().get(variant_name(row));
    const Variant& production = Registry::instance().get(row.split_k ? "cuda_splitk" : "cuda_fused");
    const gen::Limits limits = limits_for(bug_free.capabilities());
    const auto result = rc::check(variant_name(row) + " equals " + production.name(), [&] {
      const Problem problem = materialize(*gen::problem_spec(limits));
      int longest = 1;
      for (const Sequence& s : problem.sequences) longest = std::max(longest, s.context_len);
      const Knobs knobs = *gen::knobs(longest, limits);
      RC_ASSERT(bit_identical(bug_free.run(problem, knobs), production.run(problem, knobs)));
    });
    EXPECT_TRUE(result) << variant_name(row);
  }
}

// The GPU kill matrix at the defaults (100 cases a property, seed 1): every GPU mutant dies.
TEST(GpuMutants, EveryMutantDiesAtTheDefaultCaseCount) {
  PACHECK_SKIP_WITHOUT_GPU();
  KillOptions options;
  options.gpu = true;
  options.failure_dir = std::filesystem::path(::testing::TempDir()) / "pacheck-gpu-mutants";
  options.replay_program = PACHECK_BINARY;
  const KillMatrix matrix = run_kill_matrix(options);
  std::cout << format_matrix(matrix) << "\n" << format_summary(matrix);
  ASSERT_EQ(matrix.mutants.size(), cuda::mutants::gpu_mutant_catalogue().size());
  const KillSummary summary = summarize(matrix);
  std::string survivors;
  for (const std::string& s : summary.survivors) survivors += " " + s;
  EXPECT_TRUE(summary.survivors.empty()) << "GPU mutants no property killed in " << options.cases
                                         << " cases:" << survivors;
}

}  // namespace
}  // namespace pacheck
