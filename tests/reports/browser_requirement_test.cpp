// Runs report_render_test's render tests as a subprocess with the browser lookup pointed at a path that does not
// exist (PACHECK_CHROMIUM=/nonexistent): they must skip, naming Debian's chromium package, and fail instead when
// PACHECK_REQUIRE_BROWSER=1. Label `cpu`: no browser is started.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace pacheck::testing {
namespace {

struct SubprocessRun {
  int exit_status = -1;
  std::string output;
};

// The render tests, without a browser to find, and PACHECK_REQUIRE_BROWSER set to `require`.
SubprocessRun run_render_tests_without_chromium(const std::string& require) {
  const std::string command = "PACHECK_CHROMIUM=/nonexistent PACHECK_REQUIRE_BROWSER=" + require + " '" +
                              PACHECK_RENDER_TEST + "' --gtest_filter='ReportRender.*' 2>&1";
  SubprocessRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot start " << command;
    return run;
  }
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  return run;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The run exited with `exit_status`, and every render test it started ended with `outcome` ("[  SKIPPED ]" or
// "[  FAILED  ]"), saying `reason` and naming Debian's chromium package; no test ended with `other_outcome`.
void expect_every_render_test(const SubprocessRun& run, int exit_status, const std::string& outcome,
                              const std::string& reason, const std::string& other_outcome) {
  EXPECT_EQ(run.exit_status, exit_status) << run.output;
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
