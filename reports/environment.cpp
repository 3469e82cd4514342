#include "reports/environment.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "cuda/device_probe.h"

namespace pacheck::reports {
namespace {

// Single-quoted for /bin/sh: every ' becomes '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  result.status = pclose(pipe);
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == '\r'))
    result.output.pop_back();
  return result;
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
  const CommandResult revision = run_command(git + " rev-parse HEAD 2>/dev/null");
  if (revision.status == 0 && !revision.output.empty()) {
    env.git_revision = revision.output;
    const CommandResult status = run_command(git + " status --porcelain --untracked-files=no 2>/dev/null");
    env.git_dirty = status.status == 0 && !status.output.empty();
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
