// The variant registry: lookup by name (and the error that lists the known names), the split between variants and
// mutants, and coverage_gap's reasons, which `pacheck replay` prints when it skips a variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tests/fixtures/problem_builders.h"
#include "variants/variant.h"

namespace pacheck {
namespace {

class NamedVariant final : public Variant {
 public:
  NamedVariant(std::string name, bool mutant) : name_(std::move(name)), mutant_(mutant) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "a registry_test variant"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.dtypes = {DType::f32};
    c.modes = {Mode::decode};
    c.max_head_dim = 8;
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
  try {
    registry.get("gamma");
    FAIL() << "an unknown name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown variant 'gamma'; registered variants: alpha, beta");
  }
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
  const auto fill = [](int i) { return testing::wobble(i); };
  Capabilities caps;
  caps.dtypes = {DType::f32};
  caps.modes = {Mode::decode};
  caps.max_head_dim = 8;
  caps.supports_head_dim = [](int d) { return d % 2 == 0; };

  EXPECT_EQ(coverage_gap(caps, testing::single_sequence(5, 1, 1, 8, 4, fill)), "");
  EXPECT_TRUE(covers(caps, testing::single_sequence(5, 1, 1, 8, 4, fill)));
  EXPECT_EQ(coverage_gap(caps, testing::single_sequence(5, 1, 1, 8, 4, fill, DType::bf16)),
            "dtype " + std::string(dtype_name(DType::bf16)) + " not supported");
  EXPECT_EQ(coverage_gap(caps, testing::single_sequence(5, 1, 1, 16, 4, fill)), "head_dim 16 not supported");
  EXPECT_EQ(coverage_gap(caps, testing::single_sequence(5, 1, 1, 7, 4, fill)), "head_dim 7 not supported");
  EXPECT_EQ(coverage_gap(caps, testing::single_sequence(5, 5, 1, 8, 4, fill)), "mode prefill not supported");
  EXPECT_FALSE(covers(caps, testing::single_sequence(5, 3, 1, 8, 4, fill)));
}

TEST(CoverageGap, NamesTheLogitOptionOrFp8CacheTheVariantLacks) {
  Capabilities caps;
  caps.dtypes = {DType::f32};
  caps.modes = {Mode::decode};
  caps.max_head_dim = 8;
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
}  // namespace pacheck
