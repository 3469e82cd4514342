// Runs every property of the catalogue against every registered (non-mutant) variant whose capabilities it
// applies to: one gtest per (property, variant), e.g. Catalogue/PropertyTest.Holds/UlpBoundedAgreement__cpu_streaming.
// Case counts come from RC_PARAMS (default 100; the long mode sets max_success=10000).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "properties/catalogue.h"
#include "properties/generators.h"
#include "properties/runner.h"

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
  rc::detail::checkGTest([&] { property.body(ctx); });
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PropertyTest, ::testing::ValuesIn(all_pairs()),
                         [](const ::testing::TestParamInfo<PropertyOnVariant>& info) {
                           return info.param.property->name + "__" + info.param.variant->name();
                         });

// gen::Limits::engine_shapes draws only serving-engine shapes (on cpu_splitk's limits: every dtype), knobs included.
RC_GTEST_PROP(EngineShapes, DrawOnlyBf16RealHeadsBlocksAndTilesOfSixteen, ()) {
  gen::Limits limits = limits_for(Registry::instance().get("cpu_splitk").capabilities());
  limits.engine_shapes = true;
  const ProblemSpec spec = *gen::problem_spec(limits);
  RC_ASSERT(spec.dtype == DType::bf16);
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
