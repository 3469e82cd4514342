// Replays every case file of fuzz/regressions/ (every bug found once lives there) against every registered
// non-mutant CPU variant: one gtest per (file, variant), e.g. RegressionReplay/Agrees.padded_poison__cpu_streaming.
// A case whose note says it was found on a mutant ("<Property> failed on <mutant>: ...", as pacheck writes notes)
// must still fail for that mutant: the regression keeps its teeth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "problem/case_file.h"
#include "properties/agreement.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

std::vector<std::filesystem::path> regression_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(PACHECK_REGRESSIONS_DIR))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The variant a pacheck-written note names: "<Property> failed on <variant>: <detail>"; "" when there is none.
std::string variant_named_in_note(const std::string& note) {
  const std::string marker = " failed on ";
  const std::size_t at = note.find(marker);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + marker.size();
  const std::size_t end = note.find(':', begin);
  return note.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::string test_name(const std::filesystem::path& file, const std::string& variant) {
  std::string name = file.stem().string() + "__" + variant;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

struct CaseOnVariant {
  std::filesystem::path file;
  const Variant* variant;
};
void PrintTo(const CaseOnVariant& c, std::ostream* os) { *os << c.file.filename().string() << " on " << c.variant->name(); }

Agreement replay(const Case& c, const Variant& v) {
  const OracleResult oracle = run_oracle(c.problem, oracle_split_sizes(c.problem, c.knobs));
  EXPECT_TRUE(oracle.fits_fp32) << "a regression case must lie inside the error model";
  return compare_with_oracle(c.problem, oracle, v, c.knobs, v.run(c.problem, c.knobs));
}

std::string replay_line(const CaseOnVariant& c) {
  return "replay: pacheck replay " + c.file.string() + " --variant " + c.variant->name();
}

// --- every correct CPU variant passes every regression --------------------------------------------------------

std::vector<CaseOnVariant> cases_on_correct_variants() {
  std::vector<CaseOnVariant> out;
  for (const auto& file : regression_files())
    for (const Variant* v : Registry::instance().variants())
      if (!v->capabilities().needs_gpu) out.push_back({file, v});
  return out;
}

class RegressionReplay : public ::testing::TestWithParam<CaseOnVariant> {};

TEST_P(RegressionReplay, Agrees) {
  const Case c = read_case_file(GetParam().file);
  const Variant& v = *GetParam().variant;
  const std::string gap = coverage_gap(v.capabilities(), c.problem);
  if (!gap.empty()) GTEST_SKIP() << v.name() << " does not cover this case: " << gap;
  const Agreement a = replay(c, v);
  EXPECT_TRUE(a.ok) << describe_failure(c.problem, v, c.knobs, a) << replay_line(GetParam());
}

INSTANTIATE_TEST_SUITE_P(RegressionReplay, RegressionReplay, ::testing::ValuesIn(cases_on_correct_variants()),
                         [](const ::testing::TestParamInfo<CaseOnVariant>& info) {
                           return test_name(info.param.file, info.param.variant->name());
                         });

// --- a case found on a mutant still catches that mutant -------------------------------------------------------

std::vector<CaseOnVariant> cases_on_their_mutants() {
  std::vector<CaseOnVariant> out;
  for (const auto& file : regression_files()) {
    const std::string name = variant_named_in_note(read_case_file(file).note);
    const Variant* v = Registry::instance().find(name);
    if (v != nullptr && v->capabilities().is_mutant) out.push_back({file, v});
  }
  return out;
}

class RegressionMutantReplay : public ::testing::TestWithParam<CaseOnVariant> {};

TEST_P(RegressionMutantReplay, StillFailsForTheMutantThatFoundIt) {
  const Case c = read_case_file(GetParam().file);
  const Variant& mutant = *GetParam().variant;
  ASSERT_EQ(coverage_gap(mutant.capabilities(), c.problem), "");
  try {
    if (!replay(c, mutant).ok) return;
  } catch (const std::exception&) {
    return;  // the mutant faults on the case (an emulated illegal address): caught too
  }
  ADD_FAILURE() << mutant.name() << " now passes the case it was caught with: either the mutant changed or the "
                << "case lost its teeth\n" << replay_line(GetParam());
}

INSTANTIATE_TEST_SUITE_P(RegressionReplay, RegressionMutantReplay, ::testing::ValuesIn(cases_on_their_mutants()),
                         [](const ::testing::TestParamInfo<CaseOnVariant>& info) {
                           return test_name(info.param.file, info.param.variant->name());
                         });

// Before any mutant exists, or in a build without them, no case names one.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RegressionMutantReplay);

// --- the folder itself ----------------------------------------------------------------------------------------

TEST(RegressionFolder, EveryFileIsAValidCaseThatNamesWhatItGuards) {
  const auto files = regression_files();
  EXPECT_GE(files.size(), 3u) << "the regression folder " << PACHECK_REGRESSIONS_DIR << " lost its cases";
  for (const auto& file : files) {
    const Case c = read_case_file(file);  // throws (fails the test) on a malformed file
    EXPECT_FALSE(c.note.empty()) << file << ": a regression case must say what it guards against";
  }
}

TEST(RegressionFolder, GuardsAgainstAMutantWheneverMutantsExist) {
  if (Registry::instance().mutants().empty()) GTEST_SKIP() << "no mutant is registered in this build";
  EXPECT_FALSE(cases_on_their_mutants().empty())
      << "no regression case names a registered mutant: the replay suite is not shown to catch anything";
}

TEST(RegressionFolder, ReadsTheVariantFromAPacheckNote) {
  EXPECT_EQ(variant_named_in_note("MaskedLanesZeroWeight failed on mutant_x: poisoned slots changed the output"),
            "mutant_x");
  EXPECT_EQ(variant_named_in_note("a hand-written corner case"), "");
}

}  // namespace
}  // namespace pacheck
