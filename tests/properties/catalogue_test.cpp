// Runs every property of the catalogue against every registered (non-mutant) variant whose capabilities it
// applies to: one gtest per (property, variant), e.g. Catalogue/PropertyTest.Holds/UlpBoundedAgreement__cpu_streaming.
// Case counts come from RC_PARAMS (default 100; the long mode sets max_success=10000).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "properties/catalogue.h"
#include "properties/generators.h"
#include "properties/runner.h"
#include "tests/fixtures/property_in_gtest.h"

namespace pacheck {
namespace {

struct PropertyOnVariant {
  const Property* property;
  const Variant* variant;
};

std::vector<PropertyOnVariant> all_pairs() {
  std::vector<PropertyOnVariant> pairs;
  for (const Property& p : catalogue())
    for (const Variant* v : Registry::instance().variants())
      if (!v->capabilities().needs_gpu && p.applies(v->capabilities())) pairs.push_back({&p, v});
  return pairs;
}

void PrintTo(const PropertyOnVariant& p, std::ostream* os) { *os << p.property->name << " on " << p.variant->name(); }

class PropertyTest : public ::testing::TestWithParam<PropertyOnVariant> {};

TEST_P(PropertyTest, Holds) {
  PropertyContext ctx;
  ctx.variant = GetParam().variant;
  ctx.limits = limits_for(ctx.variant->capabilities());
  ctx.replay_program = PACHECK_BINARY;
  const Property& property = *GetParam().property;
  test_support::check_property(property, ctx);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PropertyTest, ::testing::ValuesIn(all_pairs()),
                         [](const ::testing::TestParamInfo<PropertyOnVariant>& info) {
                           return info.param.property->name + "__" + info.param.variant->name();
                         });

// The limits a variant's capabilities allow draw only the logit options it takes: coverage never refuses a drawn
// problem for its options.
RC_GTEST_PROP(LimitsFor, DrawOnlyTheLogitOptionsAVariantTakes, ()) {
  Capabilities caps = Registry::instance().get("cpu_streaming").capabilities();
  caps.logit_options = {*rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(), *rc::gen::arbitrary<bool>(),
                        *rc::gen::arbitrary<bool>()};
  const gen::Limits limits = limits_for(caps);
  const LogitOptionSupport& drawn = limits.logit_options;
  RC_ASSERT(drawn.soft_cap == caps.logit_options.soft_cap && drawn.window == caps.logit_options.window &&
            drawn.alibi == caps.logit_options.alibi && drawn.sinks == caps.logit_options.sinks);
  const Problem p = materialize(*gen::problem_spec(limits));
  RC_ASSERT(coverage_gap(caps, p).empty());
}

// A failing property fails its gtest test in words (property, variant, shrunk case, worst element), never RapidCheck's
// macro text or source line: a known failing mutant's failure is intercepted and read.
TEST(PropertyInGtest, AFailureReadsInPlainWords) {
  ::testing::TestPartResultArray failures;
  {
    const ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    PropertyContext ctx;
    ctx.variant = &Registry::instance().get("acc_not_rescaled");
    ctx.limits = limits_for(ctx.variant->capabilities());
    ctx.failure_dir = ::testing::TempDir();
    test_support::check_property(property_named("UlpBoundedAgreement"), ctx);
  }
  ASSERT_EQ(failures.size(), 1);
  const std::string message = failures.GetTestPartResult(0).message();
  EXPECT_NE(message.find("UlpBoundedAgreement failed on acc_not_rescaled: failed after "), std::string::npos) << message;
  EXPECT_NE(message.find("\n  problem: dtype="), std::string::npos) << message;
  EXPECT_NE(message.find("\nworst element: "), std::string::npos) << message;
  for (const char* internal : {"RC_ASSERT", "RC_FAIL", "pacheck::ProblemSpec", ".cpp:"})
    EXPECT_EQ(message.find(internal), std::string::npos) << internal << " in:\n" << message;
}

// gen::Limits::engine_shapes draws only serving-engine shapes (on cpu_splitk's limits: every dtype), knobs included.
RC_GTEST_PROP(EngineShapes, DrawOnly16BitRealHeadsBlocksAndTilesOfSixteen, ()) {
  gen::Limits limits = limits_for(Registry::instance().get("cpu_splitk").capabilities());
  limits.engine_shapes = true;
  const ProblemSpec spec = *gen::problem_spec(limits);
  RC_ASSERT(spec.dtype == DType::bf16 || spec.dtype == DType::f16);
  RC_ASSERT(spec.head_dim >= 40);
  RC_ASSERT(spec.head_dim % 8 == 0);
  RC_ASSERT(spec.block_size % 16 == 0);
  const Knobs knobs = *gen::knobs(600, limits);
  RC_ASSERT(std::min(knobs.tile_size, 64) % 16 == 0);
  RC_ASSERT(knobs.split_size % 16 == 0);
  RC_ASSERT(knobs.num_splits == 0);
}

TEST(EngineShapes, TheAgreementPropertyRunsOnThem) {
  RunOptions options;
  options.cases = 20;
  options.engine_shapes = true;
  options.failure_dir = ::testing::TempDir();
  const PropertyRun run =
      run_property(property_named("UlpBoundedAgreement"), Registry::instance().get("cpu_splitk"), options);
  EXPECT_TRUE(run.passed) << run.failure;
  EXPECT_EQ(run.cases, 20);
}

}  // namespace
}  // namespace pacheck
