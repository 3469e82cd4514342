// What a report holds (report.h): verdicts, merged figures, the comparison's verdict, the environment it was made in.
#include "reports/report.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>

#include "cuda/device_probe.h"

namespace pacheck::reports {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::passed: return "pass";
    case Verdict::failed: return "fail";
    case Verdict::gave_up: return "gave up";
    case Verdict::error: return "error";
  }
  return "?";
}

const char* status_name(GuaranteeCheck::Status status) {
  switch (status) {
    case GuaranteeCheck::Status::held: return "held";
    case GuaranteeCheck::Status::failed: return "failed";
    case GuaranteeCheck::Status::not_applicable: return "not applicable";
    case GuaranteeCheck::Status::not_in_catalogue: return "not in the catalogue";
    case GuaranteeCheck::Status::not_run: return "not run";
  }
  return "?";
}

bool CellReport::passed() const {
  return std::all_of(properties.begin(), properties.end(),
                     [](const PropertyOutcome& p) { return p.verdict == Verdict::passed; });
}

bool VariantReport::passed() const {
  return !skipped && std::all_of(cells.begin(), cells.end(), [](const CellReport& c) { return c.passed(); });
}

int VariantReport::cases() const {
  int total = 0;
  for (const CellReport& c : cells) total += c.cases;
  return total;
}

double VariantReport::worst_ulps() const {
  double worst = 0;
  for (const CellReport& c : cells) worst = std::max(worst, c.worst_ulps);
  return worst;
}

namespace {

// One figure of every cell of a dtype, merged over modes.
template <class Figure>
Figure merged(const std::vector<CellReport>& cells, DType dtype, Figure CellReport::*figure) {
  Figure out;
  for (const CellReport& c : cells)
    if (c.dtype == dtype) out.merge(c.*figure);
  return out;
}

}  // namespace

UlpHistogram VariantReport::histogram(DType dtype) const { return merged(cells, dtype, &CellReport::histogram); }

RatioHistogram VariantReport::ratio_histogram(DType dtype) const {
  return merged(cells, dtype, &CellReport::ratio_histogram);
}

ShapeBreakdown VariantReport::breakdown(DType dtype) const { return merged(cells, dtype, &CellReport::breakdown); }

bool Comparison::worse() const {
  return std::any_of(variants.begin(), variants.end(), [](const VariantComparison& v) { return v.worse; });
}

const CellReport* VariantReport::worst_cell() const {
  const CellReport* worst = nullptr;
  for (const CellReport& c : cells)
    if (!worst || c.worst_normalized > worst->worst_normalized) worst = &c;
  return worst;
}

bool Report::non_mutants_passed() const {
  return std::all_of(variants.begin(), variants.end(),
                     [](const VariantReport& v) { return v.skipped || v.capabilities.is_mutant || v.passed(); });
}

namespace {

// Single-quoted for /bin/sh: every ' becomes '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command's output without its trailing line breaks; nullopt when it cannot start or exits non-zero.
std::optional<std::string> run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string output;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) output += buffer.data();
  if (pclose(pipe) != 0) return std::nullopt;
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  return output;
}

std::string compiler_name() {
#if defined(__clang__)
  return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown compiler";
#endif
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace

Environment collect_environment(const std::filesystem::path& source_root, const std::string& command_line) {
  Environment env;
  const std::string git = "git -C " + shell_quote(source_root.string());
  const std::optional<std::string> revision = run_command(git + " rev-parse HEAD 2>/dev/null");
  if (revision && !revision->empty()) {
    env.git_revision = *revision;
    const std::optional<std::string> status = run_command(git + " status --porcelain --untracked-files=no 2>/dev/null");
    env.git_dirty = status && !status->empty();
  } else {
    env.git_revision = "unknown: " + source_root.string() + " is not a git checkout, or git is not installed";
  }
  env.compiler = compiler_name();
#ifdef PACHECK_BUILD_TYPE
  env.build_type = PACHECK_BUILD_TYPE;
#endif
  std::string reason;
  env.cuda_available = cuda_device_available(&reason);
  env.cuda_device = env.cuda_available ? cuda_device_description() : reason;
  env.hardware_threads = std::thread::hardware_concurrency();
  env.generated_at = utc_now();
  env.command_line = command_line;
  return env;
}

}  // namespace pacheck::reports
