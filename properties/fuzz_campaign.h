// The time-boxed fuzzer behind `pacheck fuzz`: runs the catalogue against one variant, round after round with a
// fresh seed, until the budget is spent or a property fails.
//
// Workers are processes: RapidCheck's state is process-global, so two properties checked at once in one process
// corrupt each other; and a variant that crashes or hangs kills only a worker, which the parent reports. Worker w's
// round r uses seed `seed + r * jobs + w` and applicable property (r * jobs + w) mod n, so a failure's seed alone
// names its round. RecordingVariant and run_in_child also serve `pacheck check` (plugins: a child per property).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "variants/variant.h"

namespace pacheck {

struct FuzzCampaignOptions {
  const Variant* variant = nullptr;
  double seconds = 60;
  std::uint64_t seed = 1;
  int jobs = 1;
  int cases_per_round = 20;
  bool keep_going = false;  // continue after a failure until the budget is spent
  bool engine_shapes = false;  // gen::Limits::engine_shapes
  KernelPins pins;             // gen::Limits::pins
  std::filesystem::path failure_dir = "pacheck-failures/fuzz";
  std::string replay_program = "pacheck";
  // How long a worker still in a round after the budget (shrinking, or hung) gets before it is killed.
  double grace_seconds = 120;
  // Asked in each worker when the variant needs a GPU (the parent must not initialise CUDA before it forks).
  std::function<bool(std::string* reason)> gpu_available;
};

struct FuzzFailure {
  std::string property;
  std::uint64_t seed = 0;
  int cases = 0;          // of the round, the failing one included
  std::string message;    // RapidCheck's: the shrunk counterexample and the property's description
  std::string reproduce;  // RapidCheck's reproduce string ("" after a crash or hang)
  std::vector<std::filesystem::path> case_files;  // saved by the property (for `pacheck replay`)
  std::string check_command;  // re-runs the failing round: `pacheck check ... --seed S --cases C`
};

struct FuzzProgress {
  double elapsed_seconds = 0;
  long long cases = 0;
  long long rounds = 0;
  int failures = 0;
  double cases_per_second() const { return elapsed_seconds > 0 ? cases / elapsed_seconds : 0; }
};

struct FuzzReport {
  FuzzProgress totals;
  std::map<std::string, long long> cases_per_property;
  std::map<std::string, int> gave_up_rounds;  // rounds RapidCheck abandoned (too many discarded cases)
  std::vector<FuzzFailure> failures;
  bool skipped = false;     // the variant needs a GPU and none answered
  std::string skip_reason;
};

// `inner` under another class, which overrides run() to watch it.
class ForwardingVariant : public Variant {
 public:
  explicit ForwardingVariant(const Variant& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::string description() const override { return inner_.description(); }
  Capabilities capabilities() const override { return inner_.capabilities(); }
  ErrorModel error_model(const Problem& p, const OracleResult& o, std::size_t row, const Knobs& k) const override {
    return inner_.error_model(p, o, row, k);
  }

 protected:
  const Variant& inner_;
};

// The variant as a worker's property sees it: it also saves the problem it throws on (an emulated illegal address,
// a CUDA or plugin error) as `<property>-<variant>.json` in `dir`; RapidCheck's last failing call is the shrunk case,
// which the file ends up holding. With record_every_run each problem is first saved as in_flight_path(dir), so that
// file holds whatever killed the process (keep_in_flight names it).
class RecordingVariant final : public ForwardingVariant {
 public:
  RecordingVariant(const Variant& inner, std::filesystem::path dir, std::string property, bool record_every_run)
      : ForwardingVariant(inner), dir_(std::move(dir)), property_(std::move(property)),
        record_every_run_(record_every_run) {}
  Output run(const Problem& p, const Knobs& k) const override;

  static std::filesystem::path in_flight_path(const std::filesystem::path& dir) { return dir / "in-flight.json"; }
  // Renames a dead run's in-flight problem to `<property>-<variant>-<kind>.json` in dir and returns that path; ""
  // with `why` when there is none or it cannot be renamed.
  static std::filesystem::path keep_in_flight(const std::filesystem::path& dir, const std::string& property,
                                              const std::string& variant, const std::string& kind, std::string* why);

 private:
  void save(const std::filesystem::path& path, const Problem& p, const Knobs& k, const std::string& what) const;
  std::filesystem::path dir_;
  std::string property_;
  bool record_every_run_;
};

// A function run in a forked child, so a crash, hang or corrupted RapidCheck state leaves the caller alone; its
// result comes back over a pipe.
struct ChildRun {
  int status = 0;          // as waitpid reports it
  bool timed_out = false;  // killed (SIGKILL) at the time limit
  std::string result;      // what the function returned; complete only when completed()
  bool completed() const;  // exited with status 0 before the time limit
};
// time_limit_seconds <= 0: no limit. The child ends with _exit (no destructors or atexit handlers): status 0 after
// returning, 3 after an exception (its text on stderr).
ChildRun run_in_child(const std::function<std::string()>& body, double time_limit_seconds = 0);

// A process's end in words: "killed by signal 11 (Segmentation fault)", "exited with status 3".
std::string describe_exit(int status);

// Throws std::invalid_argument for bad options (no variant, no budget, no property applies). `progress` is called
// about once a second and at the end; `on_failure` as each failure arrives.
FuzzReport run_fuzz_campaign(const FuzzCampaignOptions& options,
                             const std::function<void(const FuzzProgress&)>& progress = {},
                             const std::function<void(const FuzzFailure&)>& on_failure = {});

}  // namespace pacheck
