#pragma once
// Replay: recorded measurements served per configuration, so searchers can be evaluated
// (and the real tuning loop run) without a GPU.
//
//   steer::Recording recording = steer::Recording::load("pnpoly.ktt.json.gz");
//   steer::ReplayBackend backend(recording);
//   steer::tune(spec, recording.space(), backend, searcher, nullptr, options);
//
// The Space a recording is replayed over is owned by the Recording, and every searcher and
// loop must tune over that very object: KernelInstance::config_index and Proposal::config
// are indices into it.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "steer/backend.hpp"
#include "steer/result.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"

namespace steer {

// A recording laid out over a Space: dense per-configuration arrays (status, runtime,
// compile time, counters, energy) and the recorded Result of each configuration.
class Recording {
 public:
  // Over a space built from the recording itself: each recorded parameter with its value
  // list, and as the only validity rule "was recorded" (the original tool's constraints are
  // not known, but the configurations it recorded are exactly those it found valid), so
  // searchers only ever propose recorded configurations. Repeated tests of a configuration
  // are merged first (merge_repeated_tests). Throws Error when nothing was recorded.
  static Recording from_import(const ImportedRecording& imported);
  // Over the space of `definition` (e.g. a spec's): recorded configurations are placed by
  // parameter name and value; space configurations the recording lacks are not present()
  // and replay as Skipped "not in the recording"; recorded ones outside the space are
  // counted in outside_space(). Throws Error when a space parameter is not recorded.
  static Recording from_import(const ImportedRecording& imported, const SpaceDefinition& definition);
  // import_recording(file), then from_import (over `definition` when given).
  static Recording load(const std::filesystem::path& file, const SpaceDefinition* definition = nullptr);

  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  const Space& space() const noexcept { return *space_; }
  const std::string& device() const noexcept { return device_; }
  const std::string& kernel() const noexcept { return kernel_; }

  std::uint64_t present_count() const noexcept { return present_count_; }  // recorded configs in the space
  std::uint64_t valid_count() const noexcept { return valid_count_; }      // of those, status Ok
  std::uint64_t outside_space() const noexcept { return outside_space_; }
  // The fastest valid runtime in the space; nullopt when no configuration is valid.
  std::optional<double> best_runtime_ms() const noexcept { return best_runtime_ms_; }

  // Per configuration of space(). Absent configurations: status Skipped, NaN times.
  bool present(ConfigIndex config) const { return slot_[config] != kAbsent; }
  Status status(ConfigIndex config) const { return status_[config]; }
  double runtime_ms(ConfigIndex config) const { return runtime_ms_[config]; }  // NaN: no timing
  double compile_ms(ConfigIndex config) const { return compile_ms_[config]; }  // 0: not recorded
  double energy_joules(ConfigIndex config) const { return energy_joules_[config]; }  // NaN: none
  // Counter names, sorted; counter(c, i) is NaN where configuration c lacks counter i.
  const std::vector<std::string>& counter_names() const noexcept { return counter_names_; }
  double counter(ConfigIndex config, std::size_t which) const { return counters_[which][config]; }

  // The recorded Result of a present configuration (config_index = its space index), or
  // nullptr when absent. Stable for the Recording's lifetime.
  const Result* recorded(ConfigIndex config) const;
  // What replaying `config` yields: the recorded Result, or for an absent configuration a
  // Result with status Skipped and message "not in the recording" (never invented values).
  Result replay(ConfigIndex config) const;

 private:
  static constexpr std::uint32_t kAbsent = UINT32_MAX;
  Recording() = default;
  void fill(const ImportedRecording& imported, std::vector<Result> merged);

  std::unique_ptr<Space> space_;  // heap-held so its address survives moves of the Recording
  std::string device_, kernel_;
  std::vector<Result> results_;              // recorded, one per present configuration
  std::vector<std::uint32_t> slot_;          // config -> index into results_, or kAbsent
  std::vector<Status> status_;
  std::vector<double> runtime_ms_, compile_ms_, energy_joules_;
  std::vector<std::string> counter_names_;
  std::vector<std::vector<double>> counters_;  // [counter][config]
  std::uint64_t present_count_ = 0, valid_count_ = 0, outside_space_ = 0;
  std::optional<double> best_runtime_ms_;
};

// The runtime a test of `result` is credited with: the median of its timed launches, or the
// one recorded time when the format kept only that (e.g. KTT's Duration).
double recorded_runtime_ms(const Result& result) noexcept;

// Serves a Recording through the Backend interface, so steer::tune runs unchanged against it.
// load() accepts any program (nothing is compiled); compile() returns the recorded compile
// time, or throws CompileError with the recorded message for a recorded compile failure;
// run() returns the recorded status, timing, counters and energy. A configuration the
// recording lacks compiles to nothing and runs as Status::Skipped "not in the recording".
// Thread-safe (it only reads the Recording, which must outlive it).
class ReplayBackend final : public Backend {
 public:
  explicit ReplayBackend(const Recording& recording) : recording_(recording) {}
  DeviceInfo device() const override;
  void load(const Program&) override {}
  std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) override;
  RunResult run(const CompiledKernel& kernel, const KernelInstance& instance, const RunOptions& options) override;

 private:
  const Recording& recording_;
};

}  // namespace steer
