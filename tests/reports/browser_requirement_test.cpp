// Runs report_render_test's render tests as a subprocess with the browser lookup pointed at a path that does not
// exist (PACHECK_CHROMIUM=/nonexistent): they must skip, naming Debian's chromium package, and fail instead when
// PACHECK_REQUIRE_BROWSER=1. Label `cpu`: no browser is started.
#include <gtest/gtest.h>

#include <string>

#include "tests/fixtures/subprocess.h"

namespace pacheck::testing {
namespace {

// The render tests, without a browser to find, and PACHECK_REQUIRE_BROWSER set to `require`.
Subprocess run_render_tests_without_chromium(const std::string& require) {
  return shell("PACHECK_CHROMIUM=/nonexistent PACHECK_REQUIRE_BROWSER=" + require + " " + quoted(PACHECK_RENDER_TEST) +
               " --gtest_filter='ReportRender.*'");
}

// The run exited with `exit_status`, and every render test it started ended with `outcome` ("[  SKIPPED ]" or
// "[  FAILED  ]"), saying `reason` and naming Debian's chromium package; no test ended with `other_outcome`.
void expect_every_render_test(const Subprocess& run, int exit_status, const std::string& outcome,
                              const std::string& reason, const std::string& other_outcome) {
  EXPECT_EQ(run.exit_code(), exit_status) << run.output;
  const std::size_t started = occurrences(run.output, "[ RUN      ] ReportRender.");
  EXPECT_GE(started, 3u) << run.output;
  // gtest names a skipped or failed test twice: where it ran, and in the closing summary.
  EXPECT_EQ(occurrences(run.output, outcome + " ReportRender."), 2 * started) << run.output;
  EXPECT_EQ(occurrences(run.output, reason), started) << run.output;
  EXPECT_EQ(occurrences(run.output, "apt-get install chromium"), started) << run.output;
  EXPECT_EQ(occurrences(run.output, other_outcome + " ReportRender."), 0u) << run.output;
}

TEST(RenderTestWithoutChromium, SkipsNamingThePackage) {
  expect_every_render_test(run_render_tests_without_chromium("0"), 0, "[  SKIPPED ]",
                           "$PACHECK_CHROMIUM=/nonexistent is not an executable", "[  FAILED  ]");
}

TEST(RenderTestWithoutChromium, FailsWhenTheBrowserIsRequired) {
  expect_every_render_test(run_render_tests_without_chromium("1"), 1, "[  FAILED  ]",
                           "PACHECK_REQUIRE_BROWSER=1: the browser is required", "[  SKIPPED ]");
}

}  // namespace
}  // namespace pacheck::testing
