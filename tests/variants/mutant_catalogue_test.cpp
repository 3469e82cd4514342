// The mutant catalogue (variants/mutants/catalogue.cpp): a well-formed table, and exactly its rows registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "variants/mutants/mutant.h"
#include "variants/variant.h"

namespace pacheck::mutants {
namespace {

TEST(MutantCatalogue, NamesAreUniqueAndEveryRowSaysWhatItBreaksAndWhy) {
  ASSERT_FALSE(catalogue().empty());
  std::set<std::string_view> names;
  for (const MutantSpec& row : catalogue()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_FALSE(row.name.empty());
    EXPECT_TRUE(names.insert(row.name).second) << "the name is used by two rows";
    EXPECT_FALSE(row.bug_description.empty()) << "no description";
    EXPECT_EQ(row.bug_description.find('\n'), std::string_view::npos) << "the description is one line";
    EXPECT_FALSE(row.bug_class.empty()) << "no bug class";
  }
}

// Each bug of the meta-kernel is one mutant: a bug no row uses is a switch nothing tests, a bug two rows use is
// one mutant counted twice.
TEST(MutantCatalogue, UsesEveryBugButNoneExactlyOnce) {
  std::vector<int> uses(static_cast<std::size_t>(Bug::count), 0);
  for (const MutantSpec& row : catalogue()) {
    const auto index = static_cast<std::size_t>(row.bug);
    ASSERT_LT(index, uses.size()) << row.name << " names Bug::count, which is no bug";
    ++uses[index];
  }
  EXPECT_EQ(uses[static_cast<std::size_t>(Bug::none)], 0) << "a mutant without a bug is a correct kernel";
  for (std::size_t b = 1; b < uses.size(); ++b) EXPECT_EQ(uses[b], 1) << "Bug value " << b;
}

TEST(MutantCatalogue, EveryRowIsARegisteredMutantOfAKernelWithACorrectCounterpart) {
  for (const MutantSpec& row : catalogue()) {
    SCOPED_TRACE(std::string(row.name));
    const Variant* variant = Registry::instance().find(std::string(row.name));
    ASSERT_NE(variant, nullptr) << "not registered";
    const auto* mutant = dynamic_cast<const Mutant*>(variant);
    ASSERT_NE(mutant, nullptr) << "registered, but not as a mutants::Mutant";
    EXPECT_TRUE(mutant->capabilities().is_mutant);
    EXPECT_EQ(mutant->bug(), row.bug);
    EXPECT_EQ(mutant->kernel(), row.kernel);
    EXPECT_NE(std::find(std::begin(kKernels), std::end(kKernels), row.kernel), std::end(kKernels))
        << "the kernel is not one the bit-identity proof runs";
    const Variant* counterpart = Registry::instance().find(counterpart_name(row.kernel));
    ASSERT_NE(counterpart, nullptr) << "no correct variant " << counterpart_name(row.kernel);
    EXPECT_FALSE(counterpart->capabilities().is_mutant) << counterpart->name();
    EXPECT_EQ(mutant->description(),
              std::string(counterpart_name(row.kernel)) + " with one bug: " + std::string(row.bug_description));
  }
}

TEST(MutantCatalogue, EveryRegisteredMutantIsARow) {
  std::set<std::string> rows;
  for (const MutantSpec& row : catalogue()) rows.insert(std::string(row.name));
  for (const Variant* v : Registry::instance().mutants()) EXPECT_TRUE(rows.count(v->name())) << v->name();
  EXPECT_EQ(Registry::instance().mutants().size(), catalogue().size());
}

}  // namespace
}  // namespace pacheck::mutants
