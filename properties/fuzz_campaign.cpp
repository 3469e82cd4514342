#include "properties/fuzz_campaign.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "problem/case_file.h"
#include "properties/runner.h"

namespace pacheck {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration duration_of(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The worker -> parent protocol: frames of [type byte][u32 length][fields], each field [u32 length][bytes].

enum class Message : char { skip = 'S', round_begins = 'B', round_ends = 'E' };
enum class RoundStatus : char { passed = 'p', failed = 'f', gave_up = 'g' };

void append_u32(std::string& out, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((x >> (8 * i)) & 0xff);
}

std::uint32_t read_u32(const std::string& in, std::size_t at) {
  std::uint32_t x = 0;
  for (int i = 0; i < 4; ++i) x |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return x;
}

// Writes all of `data` to `fd`, or ends the process with status 3 when the reader is gone (nobody to report to).
void write_all(int fd, const std::string& data) {
  for (std::size_t written = 0; written < data.size();) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    written += static_cast<std::size_t>(n);
  }
}

// Before a fork, so buffered output is not written twice.
void flush_all() {
  std::fflush(nullptr);
  std::cout.flush();
  std::cerr.flush();
}

void send_frame(int fd, Message type, const std::vector<std::string>& fields) {
  std::string payload;
  for (const std::string& f : fields) {
    append_u32(payload, static_cast<std::uint32_t>(f.size()));
    payload += f;
  }
  std::string frame(1, static_cast<char>(type));
  append_u32(frame, static_cast<std::uint32_t>(payload.size()));
  write_all(fd, frame + payload);
}

struct Frame {
  Message type;
  std::vector<std::string> fields;
};

// Splits complete frames off the front of `buffer`.
std::vector<Frame> take_frames(std::string& buffer) {
  std::vector<Frame> frames;
  std::size_t at = 0;
  while (buffer.size() - at >= 5) {
    const std::uint32_t length = read_u32(buffer, at + 1);
    if (buffer.size() - at - 5 < length) break;
    Frame f{static_cast<Message>(buffer[at]), {}};
    for (std::size_t p = at + 5; p + 4 <= at + 5 + length;) {
      const std::uint32_t n = read_u32(buffer, p);
      f.fields.push_back(buffer.substr(p + 4, n));
      p += 4 + n;
    }
    frames.push_back(std::move(f));
    at += 5 + length;
  }
  buffer.erase(0, at);
  return frames;
}

// Rounds.

struct Round {
  const Property* property;
  std::uint64_t seed;
};

Round round_of(const FuzzCampaignOptions& o, const std::vector<const Property*>& properties, std::uint64_t index) {
  return Round{properties[index % properties.size()], o.seed + index};
}

std::filesystem::path failure_dir_of(const FuzzCampaignOptions& o, std::uint64_t seed) {
  return o.failure_dir / ("seed-" + std::to_string(seed));
}

PropertyRun run_round(const FuzzCampaignOptions& o, const Round& round, bool record_every_run) {
  const std::filesystem::path dir = failure_dir_of(o, round.seed);
  const RecordingVariant variant(*o.variant, dir, round.property->name, record_every_run);
  RunOptions options;  // assigned field by field: designated initializers warn of every field left out
  options.cases = o.cases_per_round;
  options.seed = round.seed;
  options.failure_dir = dir;
  options.replay_program = o.replay_program;
  options.engine_shapes = o.engine_shapes;
  options.pins = o.pins;
  PropertyRun run;
  try {
    run = run_property(*round.property, variant, options);
  } catch (const std::exception& e) {
    run.failure = std::string("the property run threw: ") + e.what();
  }
  return run;
}

volatile sig_atomic_t g_stop_requested = 0;
extern "C" void request_stop(int) { g_stop_requested = 1; }

[[noreturn]] void run_worker(const FuzzCampaignOptions& o, const std::vector<const Property*>& properties, int worker,
                             int fd, Clock::time_point deadline) {
  struct sigaction action {};
  action.sa_handler = request_stop;
  action.sa_flags = SA_RESTART;  // the flag is read between rounds; file writes inside a round must not see EINTR
  sigaction(SIGUSR1, &action, nullptr);
  if (o.variant->capabilities().needs_gpu) {
    std::string reason = "no GPU probe was given";
    if (!o.gpu_available || !o.gpu_available(&reason)) {
      send_frame(fd, Message::skip, {reason});
      ::_exit(0);
    }
  }
  for (std::uint64_t r = 0; !g_stop_requested && Clock::now() < deadline; ++r) {
    const std::uint64_t index = r * static_cast<std::uint64_t>(o.jobs) + static_cast<std::uint64_t>(worker);
    send_frame(fd, Message::round_begins, {std::to_string(index)});
    const PropertyRun run = run_round(o, round_of(o, properties, index), /*record_every_run=*/false);
    const RoundStatus status = run.passed ? RoundStatus::passed : (run.gave_up ? RoundStatus::gave_up : RoundStatus::failed);
    const int cases = run.cases + (status == RoundStatus::failed ? 1 : 0);
    send_frame(fd, Message::round_ends,
               {std::to_string(index), std::to_string(cases), std::string(1, static_cast<char>(status)), run.failure,
                run.reproduce});
    if (status == RoundStatus::failed && !o.keep_going) ::_exit(1);
  }
  ::_exit(0);
}

// Re-runs a round that crashed or hung (rounds are deterministic in their seed) in a child that saves each problem
// before running it, and keeps the last: the one the kernel died on. "" with `why` when the re-run did not die so.
std::filesystem::path record_fatal_problem(const FuzzCampaignOptions& o, const Round& round, const char* kind,
                                           std::string* why) {
  const std::filesystem::path dir = failure_dir_of(o, round.seed);
  std::error_code ec;
  std::filesystem::remove(RecordingVariant::in_flight_path(dir), ec);
  ChildRun rerun;
  try {
    rerun = run_in_child(
        [&] {
          run_round(o, round, /*record_every_run=*/true);
          return std::string();
        },
        o.grace_seconds);
  } catch (const std::runtime_error& e) {
    *why = std::string("could not start the recording re-run: ") + e.what();
    return {};
  }
  // Killed at the limit: the hang reproduced, and the in-flight case is the problem it hangs on.
  if (!rerun.timed_out && !WIFSIGNALED(rerun.status)) {
    std::filesystem::remove(RecordingVariant::in_flight_path(dir), ec);
    *why = std::string("a re-run of the round did not ") + kind + ", so no case was saved (a nondeterministic kernel?)";
    return {};
  }
  return RecordingVariant::keep_in_flight(dir, round.property->name, o.variant->name(), kind, why);
}

// The parent.

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  bool in_round = false;
  std::uint64_t current_round = 0;
  bool killed = false;           // by the parent, after the grace period
  bool killed_for_hang = false;  // ... for running past budget + grace, not because the campaign was stopping
};

std::string check_command(const FuzzCampaignOptions& o, const Round& round, int cases, const std::string& reproduce) {
  std::string command = o.replay_program + " check --variant " + o.variant->name() + " --property " +
                        round.property->name + " --seed " + std::to_string(round.seed) + " --cases " +
                        std::to_string(cases);
  if (o.engine_shapes) command += " --engine-shapes";
  command += pin_arguments(o.pins);
  if (!reproduce.empty()) command += " --reproduce " + reproduce;
  return command;
}

std::vector<std::filesystem::path> saved_cases(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::ranges::sort(files);
  return files;
}

}  // namespace

Output RecordingVariant::run(const Problem& p, const Knobs& k) const {
  if (record_every_run_) save(in_flight_path(dir_), p, k, "the kernel crashed or hung on this problem");
  try {
    return inner_.run(p, k);
  } catch (const std::exception& e) {
    save(dir_ / (property_ + "-" + inner_.name() + ".json"), p, k, std::string("the kernel threw: ") + e.what());
    throw;
  }
}

void RecordingVariant::save(const std::filesystem::path& path, const Problem& p, const Knobs& k,
                            const std::string& what) const {
  try {
    write_case_file(path, Case{p, k, property_ + " failed on " + inner_.name() + ": " + what});
  } catch (const std::exception&) {
    // Best effort: the failure itself is still reported, with its reproduce command.
  }
}

std::filesystem::path RecordingVariant::keep_in_flight(const std::filesystem::path& dir, const std::string& property,
                                                       const std::string& variant, const std::string& kind,
                                                       std::string* why) {
  const std::filesystem::path in_flight = in_flight_path(dir);
  if (!std::filesystem::exists(in_flight)) {
    *why = "no problem was saved before the run died";
    return {};
  }
  const std::filesystem::path saved = dir / (property + "-" + variant + "-" + kind + ".json");
  std::error_code ec;
  std::filesystem::rename(in_flight, saved, ec);
  if (ec) {
    *why = "could not save the recorded case: " + ec.message();
    return {};
  }
  return saved;
}

bool ChildRun::completed() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

ChildRun run_in_child(const std::function<std::string()>& body, double time_limit_seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  flush_all();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    std::string result;
    try {
      result = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      code = 3;
    }
    write_all(fds[1], result);
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildRun run;
  const bool limited = time_limit_seconds > 0;
  const Clock::time_point limit = Clock::now() + duration_of(limited ? time_limit_seconds : 0);
  for (;;) {  // read until the child closes its end: it exited, or died
    pollfd fd{fds[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      char chunk[65536];
      const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      run.result.append(chunk, static_cast<std::size_t>(n));
    }
    if (limited && !run.timed_out && Clock::now() > limit) {
      ::kill(pid, SIGKILL);
      run.timed_out = true;
    }
  }
  ::close(fds[0]);
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

FuzzReport run_fuzz_campaign(const FuzzCampaignOptions& o, const std::function<void(const FuzzProgress&)>& progress,
                             const std::function<void(const FuzzFailure&)>& on_failure) {
  if (o.variant == nullptr) throw std::invalid_argument("fuzz: no variant given");
  if (!(o.seconds > 0)) throw std::invalid_argument("fuzz: the time budget must be positive");
  if (o.jobs < 1) throw std::invalid_argument("fuzz: --jobs must be at least 1");
  if (o.cases_per_round < 1) throw std::invalid_argument("fuzz: cases per round must be at least 1");
  std::vector<const Property*> properties;
  for (const Property& p : catalogue())
    if (p.applies(o.variant->capabilities())) properties.push_back(&p);
  if (properties.empty()) throw std::invalid_argument("fuzz: no property of the catalogue applies to " + o.variant->name());

  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + duration_of(o.seconds);
  const Clock::duration grace = duration_of(o.grace_seconds);

  std::vector<Worker> workers(o.jobs);
  flush_all();
  for (int w = 0; w < o.jobs; ++w) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("fuzz: pipe failed: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fuzz: fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      for (int earlier = 0; earlier < w; ++earlier) ::close(workers[earlier].fd);
      run_worker(o, properties, w, fds[1], deadline);
    }
    ::close(fds[1]);
    workers[w].pid = pid;
    workers[w].fd = fds[0];
  }

  FuzzReport report;
  Clock::time_point next_progress = start + std::chrono::seconds(1);
  std::optional<Clock::time_point> stopping_since;
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const auto add_failure = [&](const FuzzFailure& f) {
    report.failures.push_back(f);
    report.totals.failures += 1;
    if (on_failure) on_failure(f);
  };
  const auto handle = [&](Worker& worker, const Frame& frame) {
    if (frame.type == Message::skip && !frame.fields.empty()) {
      report.skipped = true;
      report.skip_reason = frame.fields[0];
    } else if (frame.type == Message::round_begins && frame.fields.size() == 1) {
      worker.in_round = true;
      worker.current_round = std::stoull(frame.fields[0]);
    } else if (frame.type == Message::round_ends && frame.fields.size() == 5) {
      worker.in_round = false;
      const Round round = round_of(o, properties, std::stoull(frame.fields[0]));
      const int cases = std::stoi(frame.fields[1]);
      report.totals.cases += cases;
      report.totals.rounds += 1;
      report.cases_per_property[round.property->name] += cases;
      const auto status = static_cast<RoundStatus>(frame.fields[2].at(0));
      if (status == RoundStatus::gave_up) report.gave_up_rounds[round.property->name] += 1;
      if (status == RoundStatus::failed) {
        add_failure({round.property->name, round.seed, cases, frame.fields[3], frame.fields[4],
                     saved_cases(failure_dir_of(o, round.seed)),
                     check_command(o, round, o.cases_per_round, frame.fields[4])});
      }
    }
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> open;
    for (Worker& w : workers)
      if (w.fd >= 0) {
        fds.push_back(pollfd{w.fd, POLLIN, 0});
        open.push_back(&w);
      }
    if (fds.empty()) break;
    const int ready = ::poll(fds.data(), fds.size(), 200);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("fuzz: poll failed: ") + std::strerror(errno));
    for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[65536];
      const ssize_t n = ::read(fds[i].fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(open[i]->fd);
        open[i]->fd = -1;
        continue;
      }
      open[i]->buffer.append(chunk, static_cast<std::size_t>(n));
      for (const Frame& frame : take_frames(open[i]->buffer)) handle(*open[i], frame);
    }
    const Clock::time_point now = Clock::now();
    if (!stopping_since && !o.keep_going && !report.failures.empty()) {
      stopping_since = now;  // the first failure ends the campaign; the others finish their round
      for (Worker& w : workers)
        if (w.fd >= 0) ::kill(w.pid, SIGUSR1);
    }
    const bool past_budget = now > deadline + grace;
    const bool past_stop = stopping_since && now > *stopping_since + grace;
    if (past_budget || past_stop) {
      for (Worker& w : workers) {
        if (w.fd < 0 || w.killed) continue;
        ::kill(w.pid, SIGKILL);
        w.killed = true;
        w.killed_for_hang = past_budget && !past_stop;
      }
    }
    if (progress && !report.skipped && now >= next_progress) {
      report.totals.elapsed_seconds = elapsed();
      progress(report.totals);
      next_progress = now + std::chrono::seconds(1);
    }
  }

  for (Worker& w : workers) {
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool clean_exit = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
    if (clean_exit || (w.killed && !w.killed_for_hang)) continue;
    // A crash or a hang the worker could not report: the parent names its round and records the problem.
    const Round round = round_of(o, properties, w.current_round);
    FuzzFailure f;
    f.property = w.in_round ? round.property->name : "(between rounds)";
    f.seed = round.seed;
    f.message = w.killed_for_hang
                    ? "the worker was still in this round " + std::to_string(static_cast<int>(o.grace_seconds)) +
                          " s after the time budget ended: the variant hangs, or shrinking a failure takes that long"
                    : "the worker " + describe_exit(status) + (w.in_round ? " in this round" : "");
    if (w.in_round) {
      std::string why;
      const auto saved = record_fatal_problem(o, round, w.killed_for_hang ? "hang" : "crash", &why);
      f.message += saved.empty() ? "\n" + why : "\nthe re-run of the round saved the problem it died on";
      f.check_command = check_command(o, round, o.cases_per_round, "");
    }
    f.case_files = saved_cases(failure_dir_of(o, round.seed));
    add_failure(f);
  }
  report.totals.elapsed_seconds = elapsed();
  if (progress && !report.skipped) progress(report.totals);
  return report;
}

}  // namespace pacheck
