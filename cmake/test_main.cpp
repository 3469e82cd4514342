// pacheck::test_main: the GoogleTest main of a kernel project's test executable, one test per applicable property
// and registered variant (pacheckConfig.cmake.in, pacheck_add_variant_tests, names them). Cases per property:
// RC_PARAMS's max_success, else PACHECK_TEST_CASES (CASES n there), else 100.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cuda/device_probe.h"
#include "properties/catalogue.h"
#include "properties/runner.h"
#include "variants/variant.h"

#ifndef PACHECK_TEST_CASES
#define PACHECK_TEST_CASES 100
#endif

namespace {

constexpr const char* kCpuSuite = "Catalogue";
constexpr const char* kGpuSuite = "GpuCatalogue";

int case_count() {
  const char* params = std::getenv("RC_PARAMS");
  if (params && std::string(params).find("max_success") != std::string::npos)
    return static_cast<int>(rc::detail::configuration().testParams.maxSuccess);
  return PACHECK_TEST_CASES;
}

class PropertyOnVariant : public ::testing::Test {
 public:
  PropertyOnVariant(const pacheck::Property& property, const pacheck::Variant& variant)
      : property_(property), variant_(variant) {}

  void TestBody() override {
    if (variant_.capabilities().needs_gpu) {
      std::optional<std::string> skip_reason;
      try {
        skip_reason = pacheck::reason_to_skip_gpu_tests();  // fails instead under PACHECK_REQUIRE_GPU=1
      } catch (const std::exception& e) {
        FAIL() << e.what();
      }
      if (skip_reason) GTEST_SKIP() << *skip_reason;
    }
    pacheck::PropertyContext ctx;
    ctx.variant = &variant_;
    ctx.limits = pacheck::limits_for(variant_.capabilities());
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    rc::detail::TestMetadata metadata;  // the id RC_PARAMS="reproduce=..." replays, named as RapidCheck's gtest tests
    metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
    metadata.description = metadata.id;
    rc::detail::TestParams params = rc::detail::configuration().testParams;
    params.maxSuccess = case_count();
    const rc::detail::TestResult result =
        rc::detail::checkProperty(rc::detail::toProperty([&] { property_.body(ctx); }), metadata, params);
    rc::detail::SuccessResult success;
    if (result.match(success)) {
      std::printf("%s on %s: %d cases passed\n", property_.name.c_str(), variant_.name().c_str(),
                  static_cast<int>(success.numSuccess));
      return;
    }
    FAIL() << property_.name << " failed on " << variant_.name() << ": " << pacheck::describe_result(result);
  }

 private:
  const pacheck::Property& property_;
  const pacheck::Variant& variant_;
};

// After the filter, before any test: when a GPU test will run, selects (and names) the GPU ctest assigned this
// process (RESOURCE_GROUPS "gpus:1") before anything touches CUDA.
class GpuSelection : public ::testing::Environment {
 public:
  void SetUp() override {
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    bool runs_gpu_tests = false;
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
      runs_gpu_tests |= suite.should_run() && std::string(suite.name()) == kGpuSuite;
    }
    if (!runs_gpu_tests) return;
    try {
      std::printf("pacheck: %s\n", pacheck::use_ctest_assigned_gpu().c_str());
    } catch (const std::exception& e) {
      // Not a gtest failure: the tests would be reported, and counted, as skipped.
      std::fprintf(stderr, "error: %s\n", e.what());
      std::exit(2);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::vector<const pacheck::Variant*> variants = pacheck::Registry::instance().variants();
  if (variants.empty()) {
    std::fprintf(stderr,
                 "error: no variant is registered in this executable: link the libraries that register them whole "
                 "(pacheck_add_variant_tests does; a static library's unreferenced objects are otherwise dropped)\n");
    return 1;
  }
  for (const pacheck::Property& property : pacheck::catalogue())
    for (const pacheck::Variant* variant : variants)
      if (property.applies(variant->capabilities()))
        ::testing::RegisterTest(variant->capabilities().needs_gpu ? kGpuSuite : kCpuSuite,
                                (property.name + "/" + variant->name()).c_str(), nullptr, nullptr, __FILE__, __LINE__,
                                [&property, variant]() -> PropertyOnVariant* {
                                  return new PropertyOnVariant(property, *variant);
                                });
  ::testing::AddGlobalTestEnvironment(new GpuSelection);
  return RUN_ALL_TESTS();
}
