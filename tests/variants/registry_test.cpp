// The variant registry: lookup by name (the error lists the known names), variants apart from mutants, coverage_gap's
// reasons (`pacheck replay` prints them), and the mutant catalogue: a well-formed table, exactly its rows registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tests/fixtures/problem_builders.h"
#include "tests/fixtures/test_files.h"
#include "variants/mutants/mutant.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

// fp32 decode up to head_dim 8, nothing more.
Capabilities fp32_decode() {
  Capabilities caps;
  caps.dtypes = {DType::f32};
  caps.modes = {Mode::decode};
  caps.max_head_dim = 8;
  return caps;
}

// One sequence of 5 keys, one head, blocks of 4.
Problem five_keys(int num_queries, int head_dim, DType dtype = DType::f32) {
  return testing::single_sequence(5, num_queries, 1, head_dim, 4, testing::wobble, dtype);
}

class NamedVariant final : public Variant {
 public:
  NamedVariant(std::string name, bool mutant) : name_(std::move(name)), mutant_(mutant) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "a registry_test variant"; }
  Capabilities capabilities() const override {
    Capabilities c = fp32_decode();
    c.is_mutant = mutant_;
    return c;
  }
  Output run(const Problem& p, const Knobs&) const override { return Output(p.output_size()); }
  ErrorModel error_model(const Problem&, const OracleResult&, std::size_t, const Knobs&) const override { return {}; }

 private:
  std::string name_;
  bool mutant_;
};

TEST(Registry, GetNamesEveryKnownVariantWhenTheNameIsUnknown) {
  Registry registry;
  registry.add(std::make_unique<NamedVariant>("beta", false));
  registry.add(std::make_unique<NamedVariant>("alpha", false));
  EXPECT_EQ(registry.get("alpha").name(), "alpha");
  EXPECT_EQ(registry.find("gamma"), nullptr);
  EXPECT_EQ(testing::thrown_message<std::invalid_argument>([&] { registry.get("gamma"); }),
            "unknown variant 'gamma'; registered variants: alpha, beta");
}

TEST(Registry, RefusesASecondVariantOfTheSameName) {
  Registry registry;
  registry.add(std::make_unique<NamedVariant>("alpha", false));
  EXPECT_THROW(registry.add(std::make_unique<NamedVariant>("alpha", true)), std::logic_error);
  EXPECT_EQ(registry.variants(true).size(), 1u);
}

TEST(Registry, KeepsMutantsOutOfOrdinaryRunsAndSortsByName) {
  Registry registry;
  registry.add(std::make_unique<NamedVariant>("zeta", false));
  registry.add(std::make_unique<NamedVariant>("broken", true));
  registry.add(std::make_unique<NamedVariant>("alpha", false));
  std::vector<std::string> ordinary, all, mutants;
  for (const Variant* v : registry.variants()) ordinary.push_back(v->name());
  for (const Variant* v : registry.variants(true)) all.push_back(v->name());
  for (const Variant* v : registry.mutants()) mutants.push_back(v->name());
  EXPECT_EQ(ordinary, (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_EQ(all, (std::vector<std::string>{"alpha", "broken", "zeta"}));
  EXPECT_EQ(mutants, (std::vector<std::string>{"broken"}));
}

// Every registered variant and mutant says what it is: `pacheck list` and the reports print these.
TEST(Registry, EveryRegisteredVariantDescribesItsArithmeticAndCapabilities) {
  const std::vector<const Variant*> all = Registry::instance().variants(true);
  ASSERT_FALSE(all.empty());
  std::set<std::string> names;
  for (const Variant* v : all) {
    SCOPED_TRACE(v->name());
    EXPECT_TRUE(names.insert(v->name()).second);
    EXPECT_FALSE(v->description().empty());
    const Capabilities c = v->capabilities();
    EXPECT_FALSE(c.dtypes.empty());
    EXPECT_FALSE(c.modes.empty());
    EXPECT_GT(c.max_head_dim, 0);
  }
  EXPECT_EQ(Registry::instance().mutants().size() + Registry::instance().variants().size(), all.size());
}

TEST(CoverageGap, NamesTheDtypeHeadDimOrModeTheVariantLacks) {
  Capabilities caps = fp32_decode();
  caps.supports_head_dim = [](int d) { return d % 2 == 0; };
  EXPECT_EQ(coverage_gap(caps, five_keys(1, 8)), "");
  EXPECT_TRUE(covers(caps, five_keys(1, 8)));
  EXPECT_EQ(coverage_gap(caps, five_keys(1, 8, DType::bf16)), "dtype bf16 not supported");
  EXPECT_EQ(coverage_gap(caps, five_keys(1, 16)), "head_dim 16 not supported");
  EXPECT_EQ(coverage_gap(caps, five_keys(1, 7)), "head_dim 7 not supported");
  EXPECT_EQ(coverage_gap(caps, five_keys(5, 8)), "mode prefill not supported");
  EXPECT_FALSE(covers(caps, five_keys(3, 8)));
}

TEST(CoverageGap, NamesTheLogitOptionOrFp8CacheTheVariantLacks) {
  Capabilities caps = fp32_decode();
  const Problem plain = testing::single_sequence(5, 1, 2, 8, 4, testing::wobble);
  Problem p = plain;
  p.options.soft_cap = 5.0f;
  EXPECT_EQ(coverage_gap(caps, p), "soft_cap not supported");
  caps.logit_options.soft_cap = true;
  EXPECT_EQ(coverage_gap(caps, p), "");
  p.options.window = 2;
  EXPECT_EQ(coverage_gap(caps, p), "window not supported");
  p = plain;
  p.options.alibi_slopes = {0.5f, 0.25f};
  EXPECT_EQ(coverage_gap(caps, p), "alibi_slopes not supported");
  p = plain;
  p.options.sinks = {0.0f, -INFINITY};
  EXPECT_EQ(coverage_gap(caps, p), "sinks not supported");
  caps.logit_options = LogitOptionSupport::all();
  EXPECT_EQ(coverage_gap(caps, p), "");
  const Problem fp8 = testing::with_fp8_cache(plain, Fp8Format::e5m2, {1.0f}, {1.0f});
  EXPECT_EQ(coverage_gap(caps, fp8), "kv_cache fp8_e5m2 not supported");
  caps.fp8_caches = {Fp8Format::e4m3};
  EXPECT_EQ(coverage_gap(caps, fp8), "kv_cache fp8_e5m2 not supported");
  caps.fp8_caches.push_back(Fp8Format::e5m2);
  EXPECT_EQ(coverage_gap(caps, fp8), "");
  // An fp8 cache only with the query dtypes and head dims declared for it; the same problem without one is covered.
  caps.fp8_query_dtypes = {DType::bf16};
  EXPECT_EQ(coverage_gap(caps, fp8), "kv_cache fp8_e5m2 with dtype fp32 and head_dim 8 not supported");
  EXPECT_EQ(coverage_gap(caps, plain), "");
  caps.fp8_query_dtypes = {DType::f32};
  caps.fp8_head_dim_multiple = 16;
  EXPECT_EQ(coverage_gap(caps, fp8), "kv_cache fp8_e5m2 with dtype fp32 and head_dim 8 not supported");
  caps.fp8_head_dim_multiple = 8;
  EXPECT_EQ(coverage_gap(caps, fp8), "");
}

}  // namespace

namespace mutants {
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
}  // namespace mutants
}  // namespace pacheck
