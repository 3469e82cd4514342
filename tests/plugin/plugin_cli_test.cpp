// `pacheck --plugin` end to end, the binary run as a subprocess: the example passes, planted bugs are killed and
// shrunk into case files and replay lines that load the plugin, bad plugins are refused by every subcommand, and a
// run's error, a crash, and logit options or an fp8 cache a plugin does not declare are reported or skipped.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "problem/case_file.h"
#include "properties/catalogue.h"
#include "tests/fixtures/problem_builders.h"
#include "tests/fixtures/subprocess.h"

namespace pacheck {
namespace {

using testing::occurrences;
using testing::quoted;
using testing::shell;
using testing::Subprocess;
namespace fs = std::filesystem;

Subprocess pacheck(const std::string& arguments) { return shell(quoted(PACHECK_BINARY) + " " + arguments); }

// Whether `text` holds `what`; either way the message quotes both.
::testing::AssertionResult holds(const std::string& text, const std::string& what) {
  const bool found = text.find(what) != std::string::npos;
  return (found ? ::testing::AssertionSuccess() : ::testing::AssertionFailure())
         << (found ? "holds" : "lacks") << " \"" << what << "\":\n" << text;
}

// The rest of the first line of `text` that starts with `prefix`, or "".
std::string line_after(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "";
}

class PluginCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("pacheck-plugin-cli-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string failures() const { return quoted((dir_ / "failures").string()); }
  // The case file `pacheck check` saves for a failure of example_streaming.
  fs::path failure_file(const std::string& property, const std::string& suffix = "") const {
    return dir_ / "failures" / (property + "-example_streaming" + suffix + ".json");
  }
  // `pacheck check --plugin PLUGIN --variant example_streaming ARGUMENTS --failures ...`.
  Subprocess check(const std::string& plugin, const std::string& arguments) const {
    return pacheck("check --plugin " + quoted(plugin) + " --variant example_streaming " + arguments + " --failures " +
                   failures());
  }
  fs::path dir_;
};

// `pacheck replay CASE --variant example_streaming --plugin PLUGIN`.
Subprocess replay(const fs::path& file, const std::string& plugin) {
  return pacheck("replay " + quoted(file.string()) + " --variant example_streaming --plugin " + quoted(plugin));
}

TEST_F(PluginCli, TheExamplePassesEveryApplicableProperty) {
  const Subprocess r = check(PACHECK_EXAMPLE_PLUGIN, "--variant example_streaming_coefficients --cases 50");
  EXPECT_EQ(r.exit_code(), 0) << r.output;
  // Every property but SplitSizeInvariance (the example does not split), for each of the two variants: the
  // logit options' laws included, since the example takes every option.
  EXPECT_EQ(occurrences(r.output, "50 cases  pass\n"), 2 * (catalogue().size() - 1)) << r.output;
  EXPECT_EQ(occurrences(r.output, "FAIL"), 0u) << r.output;
}

TEST_F(PluginCli, WithoutVariantEveryPluginVariantJoinsTheRun) {
  const Subprocess r = pacheck("check --plugin " + quoted(PACHECK_EXAMPLE_PLUGIN) +
                               " --property SingleKeyReturnsItsValue --cases 3 --failures " + failures());
  EXPECT_EQ(r.exit_code(), 0) << r.output;
  for (const char* variant : {"cpu_streaming ", "example_streaming ", "example_streaming_coefficients "})
    EXPECT_TRUE(holds(r.output, "SingleKeyReturnsItsValue " + std::string(variant)));
  const Subprocess list = pacheck("list --plugin " + quoted(PACHECK_EXAMPLE_PLUGIN));
  EXPECT_EQ(list.exit_code(), 0) << list.output;
  EXPECT_TRUE(holds(list.output, std::string("example_streaming [plugin ") + PACHECK_EXAMPLE_PLUGIN + "]: "));
}

TEST_F(PluginCli, ThePlantedBugIsKilledShrunkAndReplayed) {
  const Subprocess r = check(PACHECK_PLUGIN_NO_RESCALE, "--cases 100");
  EXPECT_EQ(r.exit_code(), 1) << r.output;
  EXPECT_TRUE(holds(r.output, "UlpBoundedAgreement    example_streaming "));
  EXPECT_TRUE(holds(r.output, "FAIL: UlpBoundedAgreement")) << "the summary's verdict";
  EXPECT_TRUE(holds(r.output, "; shrunk ")) << "RapidCheck shrank the counterexample";
  EXPECT_FALSE(holds(r.output, "; shrunk 0 times")) << "RapidCheck shrank the counterexample";
  const fs::path saved = failure_file("UlpBoundedAgreement");
  const std::string replay_line = line_after(r.output, "replay: ");
  EXPECT_EQ(replay_line.substr(replay_line.find(" replay ")),
            " replay " + saved.string() + " --variant example_streaming --plugin " + PACHECK_PLUGIN_NO_RESCALE)
      << r.output;
  EXPECT_TRUE(holds(r.output, std::string("reproduce: ") + PACHECK_BINARY + " check --variant example_streaming " +
                                  "--plugin " + PACHECK_PLUGIN_NO_RESCALE + " --property "));
  ASSERT_TRUE(fs::exists(saved)) << r.output;
  const Case c = read_case_file(saved);
  EXPECT_LE(c.problem.sequences.size(), 2u) << "a shrunk case is small:\n" << describe(c.problem);

  const Subprocess again = shell(replay_line);  // the replay line as printed: it loads the plugin and fails again
  EXPECT_EQ(again.exit_code(), 1) << again.output;
  EXPECT_TRUE(holds(again.output, "example_streaming        FAIL"));
  const Subprocess fixed = replay(saved, PACHECK_EXAMPLE_PLUGIN);
  EXPECT_EQ(fixed.exit_code(), 0) << "the correct kernel passes the same case\n" << fixed.output;
}

TEST_F(PluginCli, ACaseWithLogitOptionsPassesTheExampleAndKillsAWindowOffByOne) {
  // A prefill of 24 keys, four heads: every option set, the window shorter than most rows' histories.
  Problem p = testing::single_sequence(24, 24, 4, 8, 8, testing::wobble);
  p.options.soft_cap = 2.5f;
  p.options.window = 6;
  p.options.alibi_slopes = {0.5f, 0.25f, -0.125f, 0.0f};
  p.options.sinks = {-INFINITY, 0.5f, -1.0f, 2.0f};
  validate(p);
  const fs::path saved = dir_ / "logit_options.json";
  write_case_file(saved, Case{p, Knobs{}, "every logit option"});

  const Subprocess example = pacheck("replay " + quoted(saved.string()) + " --variant example_streaming" +
                                     " --variant example_streaming_coefficients --plugin " +
                                     quoted(PACHECK_EXAMPLE_PLUGIN));
  EXPECT_EQ(example.exit_code(), 0) << example.output;
  EXPECT_TRUE(holds(example.output, "example_streaming        pass"));
  EXPECT_TRUE(holds(example.output, "example_streaming_coefficients pass"));

  const Subprocess off_by_one = replay(saved, PACHECK_PLUGIN_WINDOW_OFF_BY_ONE);
  EXPECT_EQ(off_by_one.exit_code(), 1) << off_by_one.output;
  EXPECT_TRUE(holds(off_by_one.output, "example_streaming        FAIL"));

  const Subprocess undeclared = replay(saved, PACHECK_PLUGIN_NO_SERVING_FEATURES);
  EXPECT_EQ(undeclared.exit_code(), 0) << undeclared.output;
  EXPECT_TRUE(holds(undeclared.output, "example_streaming        skipped: soft_cap not supported"));
}

TEST_F(PluginCli, AnFp8KByTheVScaleIsKilledShrunkAndTheCaseSkipsAPluginWithoutFp8) {
  const Subprocess r = check(PACHECK_PLUGIN_FP8_V_SCALE_ON_K, "--property UlpBoundedAgreement --cases 300");
  EXPECT_EQ(r.exit_code(), 1) << r.output;
  EXPECT_TRUE(holds(r.output, "FAIL: UlpBoundedAgreement"));
  EXPECT_TRUE(holds(r.output, "; shrunk "));
  EXPECT_FALSE(holds(r.output, "; shrunk 0 times")) << "RapidCheck shrank the counterexample";
  const fs::path saved = failure_file("UlpBoundedAgreement");
  ASSERT_TRUE(fs::exists(saved)) << r.output;
  const Case c = read_case_file(saved);
  ASSERT_TRUE(c.problem.fp8_cache.has_value()) << "only an fp8 cache shows the bug:\n" << describe(c.problem);
  EXPECT_LE(c.problem.sequences.size(), 2u) << "a shrunk case is small:\n" << describe(c.problem);
  EXPECT_NE(c.problem.fp8_cache->k_scales, c.problem.fp8_cache->v_scales) << describe(c.problem);

  const Subprocess fixed = replay(saved, PACHECK_EXAMPLE_PLUGIN);
  EXPECT_EQ(fixed.exit_code(), 0) << "the correct kernel passes the same case\n" << fixed.output;
  // The case without its logit options (a sink may be what lets a single key's logit matter): still an fp8 cache.
  Problem fp8_only = c.problem;
  fp8_only.options = LogitOptions{};
  const fs::path fp8_saved = dir_ / "fp8_only.json";
  write_case_file(fp8_saved, Case{fp8_only, c.knobs, "an fp8 cache alone"});
  const Subprocess undeclared = replay(fp8_saved, PACHECK_PLUGIN_NO_SERVING_FEATURES);
  EXPECT_EQ(undeclared.exit_code(), 0) << undeclared.output;
  EXPECT_TRUE(holds(undeclared.output, "example_streaming        skipped: kv_cache " +
                                           std::string(fp8_name(c.problem.fp8_cache->format)) + " not supported"));
}

TEST_F(PluginCli, EverySubcommandRefusesABadPluginNamingIt) {
  const std::string plugin = " --plugin " + quoted(PACHECK_PLUGIN_ABI_2);
  const std::string error = std::string("error: plugin ") + PACHECK_PLUGIN_ABI_2 +
                            ": built against plugin ABI 2, this pacheck reads 1";
  for (const std::string& command :
       {"check --cases 1" + plugin, "list" + plugin, "replay " + quoted((dir_ / "absent.json").string()) + plugin,
        "fuzz --variant cpu_streaming --seconds 1" + plugin, "mutants --cases 1" + plugin,
        "report --cases 1 --out " + quoted((dir_ / "report").string()) + plugin}) {
    const Subprocess r = pacheck(command);
    EXPECT_EQ(r.exit_code(), 2) << command << "\n" << r.output;
    EXPECT_TRUE(holds(r.output, error)) << command;
  }
}

TEST_F(PluginCli, EachBadPluginGivesItsError) {
  const fs::path text = dir_ / "text.so";
  std::ofstream(text) << "a text file is not a shared library, whatever its name says;\n"
                          "it is long enough that the loader reads a whole header, and finds no ELF magic in it\n";
  const std::pair<std::string, std::string> cases[] = {
      {(dir_ / "absent.so").string(), "no such file"},
      {text.string(), "not a loadable shared library: " + text.string() + ": invalid ELF header"},
      {PACHECK_PLUGIN_NO_ENTRY, "no entry point: it does not export pacheck_plugin_entry"},
      {PACHECK_PLUGIN_NONSENSE, "variant 'example_streaming' (variants[0]): it declares no dtype"},
  };
  for (const auto& [path, what] : cases) {
    const Subprocess r = pacheck("check --plugin " + quoted(path));
    EXPECT_EQ(r.exit_code(), 2) << path << "\n" << r.output;
    EXPECT_TRUE(holds(r.output, "error: plugin " + path + ": " + what));
  }
}

TEST_F(PluginCli, ARunsErrorFailsThePropertyWithItsMessage) {
  const Subprocess r = check(PACHECK_PLUGIN_RUN_FAILS, "--property UlpBoundedAgreement --cases 5");
  EXPECT_EQ(r.exit_code(), 1) << r.output;
  EXPECT_TRUE(holds(r.output, std::string("plugin ") + PACHECK_PLUGIN_RUN_FAILS +
                                  ": example_streaming's run returned 3: the kernel refuses head_dim "));
  EXPECT_TRUE(fs::exists(failure_file("UlpBoundedAgreement"))) << "the refused problem is saved\n"
                                                                           << r.output;
}

TEST_F(PluginCli, ACrashIsReportedWithItsCaseAndReplayLine) {
  // Under AddressSanitizer its own SIGSEGV handler would take the plugin's segfault and abort instead; this checks
  // pacheck's report of the signal, so the sanitizer leaves SIGSEGV alone here (a no-op in other builds).
  const std::string segv_to_pacheck = "ASAN_OPTIONS=\"${ASAN_OPTIONS}:handle_segv=0\" ";
  const std::string crashed = std::string("plugin ") + PACHECK_PLUGIN_CRASHES + " crashed (signal " +
                              std::to_string(SIGSEGV) + ") in example_streaming";
  const Subprocess r = shell(segv_to_pacheck + quoted(PACHECK_BINARY) + " check --plugin " +
                             quoted(PACHECK_PLUGIN_CRASHES) + " --variant example_streaming" +
                             " --property UlpBoundedAgreement --property Determinism --cases 5 --failures " +
                             failures());
  EXPECT_EQ(r.exit_code(), 1) << r.output;
  for (const char* property : {"UlpBoundedAgreement", "Determinism"}) {
    EXPECT_TRUE(holds(r.output, crashed + " on " + property));
    EXPECT_TRUE(holds(r.output, "saved: " + failure_file(property, "-crash").string() + "\n"));
    ASSERT_TRUE(fs::exists(failure_file(property, "-crash"))) << r.output;
    EXPECT_NO_THROW(read_case_file(failure_file(property, "-crash"))) << "a whole case file";
  }
  // The parent survived both crashes: it printed its summary.
  EXPECT_TRUE(holds(r.output, "FAIL: UlpBoundedAgreement Determinism"));

  const std::string replay_line = line_after(r.output, "replay: ");
  const fs::path saved = failure_file("UlpBoundedAgreement", "-crash");
  EXPECT_EQ(replay_line, std::string(PACHECK_BINARY) + " replay " + saved.string() + " --variant example_streaming" +
                        " --plugin " + PACHECK_PLUGIN_CRASHES)
      << r.output;
  const Subprocess again = shell(segv_to_pacheck + replay_line);  // dies again, naming the plugin
  EXPECT_TRUE(again.died_of(SIGSEGV)) << again.output;
  EXPECT_TRUE(holds(again.output, "pacheck: " + crashed));
  const Subprocess correct = replay(saved, PACHECK_EXAMPLE_PLUGIN);
  EXPECT_EQ(correct.exit_code(), 0) << "the saved problem is a valid case\n" << correct.output;
}

TEST_F(PluginCli, FuzzAndReportReplayLinesLoadThePlugin) {
  const std::string plugin = std::string(" --plugin ") + PACHECK_PLUGIN_NO_RESCALE;
  const Subprocess fuzz = pacheck("fuzz --plugin " + quoted(PACHECK_PLUGIN_NO_RESCALE) +
                                  " --variant example_streaming --seconds 20 --seed 1 --failures " + failures());
  EXPECT_EQ(fuzz.exit_code(), 1) << fuzz.output;
  EXPECT_TRUE(holds(line_after(fuzz.output, "replay: "), " --variant example_streaming" + plugin)) << fuzz.output;
  EXPECT_TRUE(holds(line_after(fuzz.output, "reproduce: "), " check --variant example_streaming" + plugin +
                                                                " --property "))
      << fuzz.output;

  const fs::path out = dir_ / "report";
  const Subprocess report = pacheck("report --plugin " + quoted(PACHECK_PLUGIN_NO_RESCALE) +
                                    " --variant example_streaming --cases 5 --kill-cases 0 --out " +
                                    quoted(out.string()));
  EXPECT_EQ(report.exit_code(), 1) << report.output;
  std::ifstream json(out / "ulp.json");
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(holds(text, " --variant example_streaming" + plugin + "\""))
      << "a replay line in ulp.json loads the plugin";
  EXPECT_FALSE(holds(text, " --variant example_streaming\"")) << "no replay line forgets the plugin";
}

}  // namespace
}  // namespace pacheck
