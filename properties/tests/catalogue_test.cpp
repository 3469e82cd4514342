// Runs every property of the catalogue against every registered (non-mutant) variant whose capabilities it
// applies to: one gtest per (property, variant), e.g. Catalogue/PropertyTest.Holds/UlpBoundedAgreement__cpu_streaming.
// Case counts come from RC_PARAMS (default 100; the long mode sets max_success=10000).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/catalogue.h"

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

}  // namespace
}  // namespace pacheck
