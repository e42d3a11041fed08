#pragma once
// The tuning loop: a searcher proposes, an executor prepares (ahead, on a thread pool) and
// runs each test, the store keeps every finished test, the searcher observes. The same loop
// tunes on a device (DeviceExecutor: compile, time, validate) and replays a recording on a
// simulated clock (ReplayExecutor), so a simulation is a tuning run in every respect but
// where its measurements come from.
//
//   steer::DeviceExecutor device(spec, space, backend, "h200");
//   steer::TuneSummary summary = steer::tune(space, device, *searcher, &store, options);
//
//   steer::Recording recording = steer::Recording::load("pnpoly.ktt.json.gz");
//   steer::ReplayExecutor replay(recording);
//   steer::tune(recording.space(), replay, *searcher, nullptr, options);
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "steer/backend.hpp"
#include "steer/objective.hpp"
#include "steer/recording.hpp"
#include "steer/reference.hpp"
#include "steer/result.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "steer/store.hpp"

namespace steer {

// When to stop; the first condition met ends the run. Unset means no limit.
struct StopConditions {
  std::optional<std::uint64_t> tests;       // number of tests (resumed ones included)
  std::optional<double> wall_seconds;
  std::optional<double> space_fraction;     // of the space's valid configurations
  std::optional<double> target_ms;          // stop once a valid test runs at most this fast
};

struct TuneOptions {
  std::string size;                 // tune(spec, ...): problem size name; empty: the spec's default
  StopConditions stop;
  // run.measure applies to every test, on top of what the searcher asks for. A stored
  // test that lacks what is asked for (counters, energy) is measured again and replaced.
  RunOptions run;
  // The hang timeout: a launch slower than this many ms is a `timeout`, and its kernel is
  // stopped (the backend replaces its worker process). Unset: the spec's kernel.timeout_ms
  // (ExecutorInfo::timeout_ms), else run.timeout_ms (10 s).
  std::optional<double> timeout_ms;
  // Stop timing a test once its timed kernel time reaches this many times what the fastest
  // valid test so far took for all its launches (its median × run.repetitions): a
  // configuration far slower than the fastest, which cannot be the best, costs about what
  // the fastest did instead of run.repetitions of its own launches. At least one launch is
  // timed; those within this factor of the fastest time all their launches. Its median then
  // comes from the launches timed (Result::time.samples_ms). 0: off. With run.max_total_ms
  // the smaller cap applies; the final check is not capped by it.
  double max_test_relative = 2;
  // Outputs of 16 MiB or more are compared with the reference on the device where the
  // backend can, instead of read back and compared on the host (docs/spec.md, "reference").
  // false: always on the host.
  bool validate_on_device = true;
  // What "best" means; an objective that needs energy measures it on every test.
  Objective objective;
  int compile_threads = 0;          // 0: hardware threads - 1 (at least 1)
  // Compile proposals on the pool while the device runs. Unless compile_threads is set,
  // a device that runs on the host's cores (PoCL) compiles inline instead: compiling
  // beside it would slow its kernels and make their timings noisy.
  bool compile_ahead = true;
  // Proposals asked for ahead of the test that runs (the compile-ahead window). 0: twice the
  // compile threads when compiling ahead, else 1 (a strictly sequential search).
  std::size_t window = 0;
  // While the searcher waits for results, its likely next proposals (Searcher::likely_next)
  // compiled on compile threads that would otherwise idle, at most this many at a time: a
  // guess it then proposes runs without waiting for its compile. Only threads beyond those
  // the proposals in the window use, so the tests proposed never wait for a guess; none
  // with one compile thread. A replay models them on its idle compile streams. 0: off.
  // 7: with the next proposal's, 8 compiles side by side, which an H100's 16-thread host ran
  // at 6.7 times one compile's rate, each barely slower (docs/simulate.md).
  std::size_t guesses = 7;
  // Keep every test in TuneSummary::results. A simulation that runs a searcher thousands
  // of times turns it off and reads each test in on_test.
  bool keep_results = true;
  // The final answer: after the search, the `final_check` best valid configurations by the
  // objective are measured again, `final_rounds` times each, interleaved (one of each in turn,
  // so that drift in the device's clocks and temperature spreads over all of them), and ranked
  // again, each with a 95 % interval; those whose intervals overlap the best's are reported
  // as tied with it. Time: by the median of all the launches. Other objectives: each round
  // measures an energy window (the run's), and a configuration scores with its launches
  // pooled and its median round's energy, its interval spanning the rounds' scores. On a
  // device (not a replay); an interrupted run skips it. 0 or 1: off. The re-measurements are
  // not stored as tests.
  std::size_t final_check = 5;
  int final_rounds = 3;
  // Which tuning of the store the run continues. By default the newest whose key matches
  // the run's (Executor::content: what the results depend on), else a new one; when the
  // store holds the same spec on the same device and size under another key, a warning says
  // which tuning and what differs. `fresh` starts a new tuning even when one matches;
  // `tuning` continues that one (of the same spec name, device, backend and size) whatever
  // its key.
  bool fresh = false;
  std::optional<std::int64_t> tuning;
  // Set (e.g. by SIGINT) to stop: a test in progress on a device is abandoned at once, its
  // kernel stopped (RunOptions::interrupt), and nothing is stored for it.
  std::atomic<bool>* interrupt = nullptr;
  // Called after every test with the result and the loop's running totals.
  std::function<void(const Result&, const struct TuneProgress&)> on_test;
  // Called once per distinct warning (e.g. a metric the device lacks), when it happens.
  std::function<void(const std::string&)> on_warning;
  // Called with each explanation the searcher makes (Searcher::take_explanations), after the
  // on_test of the test it follows.
  std::function<void(const Explanation&)> on_explanation;
};

struct TuneProgress {
  std::uint64_t tests = 0;          // done so far (resumed ones included)
  std::uint64_t valid = 0;
  std::uint64_t resumed = 0;        // served from the store, not run again
  std::optional<std::uint64_t> planned;  // tests the stop conditions allow, when known
  double elapsed_s = 0;              // on the executor's clock (simulated for a replay)
  std::optional<Result> best;
  MeasureRequest measured;          // what the latest test was asked to measure
};

struct TuneSummary {
  std::uint64_t tests = 0, valid = 0, failed = 0, resumed = 0;
  // Valid tests this run timed fewer launches than run.repetitions: a cap stopped them
  // (TuneOptions::max_test_relative, run.max_total_ms). Not counted in a replay.
  std::uint64_t shortened = 0;
  bool interrupted = false;
  bool compiled_ahead = false;      // whether the compile pool ran (see TuneOptions::compile_ahead)
  std::string stop_reason;
  // Wall time, split: setup (load, reference), waiting for compiles, running, validating,
  // and the framework's own overhead (searcher, store, bookkeeping). For a replay wall_s is
  // the simulated clock's and the split is of the real time the replay took.
  double wall_s = 0, setup_s = 0, compile_wait_s = 0, run_s = 0, validation_s = 0, overhead_s = 0;
  double compile_cpu_s = 0;         // total compiler time, much of it hidden by compiling ahead
  // The searcher's guesses compiled ahead (TuneOptions::guesses), and those it then proposed.
  std::uint64_t guessed = 0, guesses_tested = 0;
  double median_overhead_ms = 0;    // framework time per test (not compile, run or validation)
  std::optional<Result> best;       // by the objective (the fastest for "time"; after a final check, its winner)
  // The final check (TuneOptions::final_check), best first: each configuration's Result with
  // the launches of every round pooled (time) and, for objectives with energy, its median
  // round's energy; the 95 % interval of the median time; and its objective score (lower is
  // better; ms for time) with that score's interval (for time, low_ms and high_ms again).
  struct Finalist {
    Result result;
    double low_ms = 0, high_ms = 0;
    double score = 0, low_score = 0, high_score = 0;
    bool tied = false;  // its score's interval overlaps the best's: the two cannot be told apart
  };
  std::vector<Finalist> finalists;
  std::string objective;            // Objective::name()
  double best_objective = 0;        // the best's objective value (Objective::value)
  double median_valid_ms = 0;       // median runtime of the valid tests
  // Profiling cost over the tests that collected counters: their run time (timing,
  // read-back and profiling) against the same without profiling.
  std::uint64_t profiled = 0;
  double profiling_s = 0;
  double profiled_run_s = 0;        // run time of the profiled tests, profiling included
  double mean_passes = 0;
  double median_pass_overhead_ms = 0;  // per pass, beyond the kernel's own time
  // The time-energy Pareto front of the valid tests with energy (by time).
  std::vector<Result> pareto;
  std::vector<std::string> warnings;
  std::string device;
  std::size_t devices = 1;          // tests run at once (Executor::slots: devices, MPI ranks)
  std::string problem_size;
  std::vector<Result> results;      // every test, in order
  std::int64_t tuning = 0;          // the store's tuning the run continued or created (0: no store)
  bool new_tuning = false;          // created by this run
};

// ---- Executors: what a test runs on ----------------------------------------------------

// What the store and the summary need to know about a run: the device, the spec it tunes
// and the problem size.
struct ExecutorInfo {
  DeviceInfo device;
  // The store's key (TuningKey): on a device the hash of the spec's content that decides
  // results (parameters, constraints, kernel, size, reference); in a replay the recording's.
  std::string spec_name, spec_hash;
  std::string problem_size;          // name
  std::optional<double> flops;       // per launch at this size, for work-rate objectives
  std::optional<double> timeout_ms;  // the spec's kernel.timeout_ms (TuneOptions::timeout_ms)
};

// A configuration made ready to run (compiled, for a device), owned by its executor.
class PreparedTest {
 public:
  virtual ~PreparedTest() = default;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const ExecutorInfo& info() const = 0;
  // Once, before the first test (a device loads the program and computes the reference
  // outputs). Throws Error when the run cannot start.
  virtual void start(const RunOptions& run) = 0;
  // Thread-safe: runs on the compile pool ahead of the test. Never throws for a property of
  // the configuration (a compile error, a launch geometry that fails): run() reports it.
  // May return null when there is nothing to prepare (a replay).
  virtual std::unique_ptr<PreparedTest> prepare(ConfigIndex config) = 0;
  // Runs one test, with what prepare() returned for it: `run.measure` says what to measure
  // besides timing. Returns the finished
  // Result (configuration, its index, status, times, counters, energy, validation), valid
  // until the next run(): a replay hands out the recorded Result itself, uncopied. Warnings
  // said once per run (a metric the device lacks) go to `warnings`.
  virtual const Result& run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                            std::vector<std::string>& warnings) = 0;
  // What the results of this run depend on, part by part, for the store's key: read (files,
  // argument bytes) only when a store asks. Empty for a replay, which is keyed by its
  // recording.
  virtual TuningContent content() const { return {}; }
  // Seconds since start(): the wall clock on a device, the simulated clock of a replay.
  virtual double clock_s() const = 0;
  // A simulated executor (a replay) compiles nothing and keeps its own clock: the loop
  // neither prepares its tests ahead on a pool nor times its runs.
  virtual bool simulated() const { return false; }
  // Seconds spent outside the executor on its behalf (the searcher's own computation): a
  // simulated clock adds them; a wall clock has counted them already.
  virtual void charge(double /*seconds*/) {}
  // A simulated executor that models compiles ahead (a replay's compile streams): how many
  // are free at its clock now, and a compile started on one of them, which delays no other
  // (null when none is free). The loop compiles its searcher's guesses there
  // (TuneOptions::guesses); a device's loop uses its own compile pool instead.
  virtual std::size_t idle_compile_streams() const { return 0; }
  virtual std::unique_ptr<PreparedTest> prepare_idle(ConfigIndex /*config*/) { return nullptr; }

  // ---- Several tests at once (several devices, MPI ranks, a replay of N devices) ----
  // How many tests can run at the same time. With more than one the loop hands tests out
  // with submit() while fewer than slots() are running, and takes them back with next() in
  // the order they finish; run() is then used only for the final check (on one device).
  virtual std::size_t slots() const { return 1; }
  // Starts a test on a free slot (the caller keeps at most slots() running). `prepared`
  // may be null: the slot prepares it itself.
  virtual void submit(ConfigIndex config, std::unique_ptr<PreparedTest> prepared, const RunOptions& run);
  // Waits for the next test to finish (the earliest on a simulated clock) and returns it.
  // A slot that fails (its device hangs, its process dies) finishes its test as a failed
  // Result saying so. Throws Interrupted when run.interrupt is set.
  struct Finished {
    Result result;
    std::vector<std::string> warnings;
    std::size_t slot = 0;  // where it ran
  };
  virtual Finished next();
};

// What an application gives as code rather than in its spec (steer/embed.hpp fills it in).
// Each one that is set takes the place of the spec's counterpart.
struct DeviceCallbacks {
  // The launch geometry of a configuration (instance's grid, block and shared memory), in
  // place of the spec's launch expressions. It may throw to say the configuration cannot run.
  std::function<void(const std::vector<std::pair<std::string, Value>>& configuration, KernelInstance& instance)> launch;
  // Computes the expected outputs, in place of the spec's reference.
  ReferenceFunction reference;
  // Compares an output with its expected values, by output name, in place of its Comparison.
  std::map<std::string, OutputComparator> comparators;
};

// Tests on a device through a Backend: the spec resolved for one problem size, compiled
// on the pool, launched, timed and validated against the spec's reference.
class DeviceExecutor final : public Executor {
 public:
  // `size`: a problem size of the spec; empty: its default. Throws SpecError.
  DeviceExecutor(const Spec& spec, const Space& space, Backend& backend, const std::string& size = {},
                 DeviceCallbacks callbacks = {});
  ~DeviceExecutor() override;
  const ExecutorInfo& info() const override { return info_; }
  void start(const RunOptions& run) override;
  std::unique_ptr<PreparedTest> prepare(ConfigIndex config) override;
  const Result& run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                    std::vector<std::string>& warnings) override;
  // The spec's parts, the source and its includes, the input data, compiler, driver and
  // device (src/tuner/tuning_content.hpp lists them).
  TuningContent content() const override;
  double clock_s() const override;

  // A configuration's defines and launch geometry. Throws ExpressionError (or what a launch
  // callback throws) when its geometry cannot be computed.
  KernelInstance instance(ConfigIndex config) const;
  // The program the backend loads: the source and the initialised arguments.
  const Program& program() const;
  // Keep the outputs of every run (read back even without validation), for outputs().
  void keep_outputs(bool keep);
  // The latest run's outputs, one per output argument, when kept: views valid until the next run.
  std::span<const std::span<const std::byte>> outputs() const;
  // A test of `config` before it runs: its configuration, device, problem size and time stamp.
  Result test_of(ConfigIndex config) const;
  // One launch of a prepared configuration on an application's own data (Backend::launch):
  // no validation. A configuration that did not compile, or whose geometry failed, returns
  // that failure as the status.
  RunResult launch(PreparedTest& prepared, const LaunchData& data, double timeout_ms);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ExecutorInfo info_;
  Result last_;  // the latest test, handed out by run()
};

// ---- Several devices: a pool of slots, each driven by a thread of its own ----------------

// One place a test can run: a device of this process (DeviceSlot), or a rank of an MPI job
// (steer/parallel.hpp). A DevicePool calls each slot from one thread of its own, one test
// at a time.
class Slot {
 public:
  virtual ~Slot() = default;
  // For messages: "device 1 (NVIDIA H200)", "rank 3 on node7".
  virtual std::string name() const = 0;
  // Once, before its first test, on the slot's own thread (a device loads the program and
  // computes the reference outputs). Throws Error when the slot cannot start.
  virtual void start(const RunOptions& run) = 0;
  // Prepares (compiles) and runs one test to its end and returns its Result. Throws
  // Interrupted when run.interrupt is set, and SlotLost when the slot can take no more
  // tests (its device is gone, its rank died or stopped answering).
  virtual Result run(ConfigIndex config, const RunOptions& run, std::vector<std::string>& warnings) = 0;
};

// A slot that fails for good: its test is recorded as failed, with the message.
class SlotLost : public Error {
 public:
  using Error::Error;
};

// A DeviceExecutor as a slot of a pool: a device of this process.
class DeviceSlot final : public Slot {
 public:
  // `backend`, when given, is the one `executor` runs on, owned by the slot.
  DeviceSlot(std::unique_ptr<DeviceExecutor> executor, std::string name, std::unique_ptr<Backend> backend = nullptr);
  std::string name() const override { return name_; }
  void start(const RunOptions& run) override;
  Result run(ConfigIndex config, const RunOptions& run, std::vector<std::string>& warnings) override;
  DeviceExecutor& executor() { return *executor_; }

 private:
  std::unique_ptr<Backend> backend_;  // destroyed after the executor that runs on it
  std::unique_ptr<DeviceExecutor> executor_;
  std::string name_;
};

// Tests on several slots at once (Executor::slots): the loop hands a test to a free slot,
// whose thread prepares and runs it, and takes results back as they finish. `primary`
// speaks for the run (info, content: the store's key; the final check runs on it) and is
// the first slot; every slot must run the same spec on the same kind of device.
//
// A slot that is lost (SlotLost: a device that fails, an MPI rank that dies or hangs
// past its timeout) finishes its test as a `launch_error` saying so, and takes no more: the
// run goes on on the others. Only when every slot is lost does next() throw Error.
class DevicePool final : public Executor {
 public:
  DevicePool(DeviceExecutor& primary, std::vector<std::unique_ptr<Slot>> slots);
  ~DevicePool() override;
  const ExecutorInfo& info() const override { return primary_.info(); }
  void start(const RunOptions& run) override;
  std::unique_ptr<PreparedTest> prepare(ConfigIndex config) override;
  const Result& run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                    std::vector<std::string>& warnings) override;
  TuningContent content() const override { return primary_.content(); }
  double clock_s() const override { return primary_.clock_s(); }
  std::size_t slots() const override;
  void submit(ConfigIndex config, std::unique_ptr<PreparedTest> prepared, const RunOptions& run) override;
  Finished next() override;
  // Where each slot's tests went: the slot's name and how many it finished.
  std::vector<std::pair<std::string, std::uint64_t>> tests_per_slot() const;

 private:
  struct State;
  DeviceExecutor& primary_;
  std::unique_ptr<State> state_;
};

// What a replay charges each configuration for its compile where the recording holds compile
// times: its own, or the mean of the recording's configurations with its outcome (valid or
// failed). A recording made with compiles side by side on a pool holds each compile slowed by
// those beside it, or a look-up of NVRTC's cache, which a configuration's next compile does
// not repeat (docs/simulate.md, "Compile times").
enum class CompileTimes { Recorded, Mean };

// What one replayed test costs on the simulated clock: everything a real run pays for it
// (docs/simulate.md, "What a test costs"):
//   compile:     the recorded compile time, or its outcome's mean (compile_times);
//   launches:    the recorded timed launches (the sum of its samples), or runtime x
//                `repetitions` when set;
//   validation:  the recorded validation time;
//   framework:   the recorded framework time of the test (Result::overhead_ms);
//   counters:    when asked for, the recorded time of collecting them (Result::profiling_ms
//                of a recording made with counters) or else profiling_passes x (runtime +
//                pass_overhead_ms) (CUPTI replays the kernel once per pass; about 12.5 ms of
//                overhead a pass on the H200, docs/counters.md);
//   energy:      the energy window, when energy is asked for.
// ReplayExecutor adds profiler_enable_ms to a profiled test where the worker enables the
// profiler: the first profiled test, and one after an energy window or a test without counters.
// A recording that holds no compile or framework time at all (RecordedCosts) is charged the
// typical ones instead, measured on the H200 (Steer's own recordings, docs/simulate.md).
// Failed tests cost their compile and framework time; a Skipped test (not in the recording,
// or recorded as removed by a constraint) costs nothing. The searcher's own computation is
// measured as the loop runs and added by ReplayExecutor::charge (charge_searcher).
struct CostModel {
  std::optional<int> repetitions;  // unset: as recorded
  int profiling_passes = 5;        // the full counter set on the H200
  double pass_overhead_ms = 12.5;
  // Enabling CUPTI's profiler for a profiled test, which the worker does again after an
  // energy window or a test without counters (both run with it released: docs/energy.md).
  // Recordings profiled every test and hold the cost of one enabling at most.
  double profiler_enable_ms = 140;
  double typical_compile_ms = 20;       // an NVRTC compile on the H200, mostly cached (docs/simulate.md)
  double typical_framework_ms = 0.2;    // Steer's framework time per test on the H200
  bool charge_searcher = true;          // add the searcher's measured computation time
  // Compile streams a replay models, working ahead of the device as the loop's compile pool
  // does (TuneOptions::compile_ahead): a proposal starts compiling when the loop takes it
  // into its pipeline and a stream is free, and its test runs once the device is free and its
  // compile is done. 0: every compile is charged inline, before its test (Kernel Tuner's
  // simulation). A recording whose framework times include compiling (KTT) charges them
  // inline either way. The default is one, the conservative reading: look-ups of NVRTC's
  // compile cache take turns, full compiles run side by side (8.4 times as many a second on
  // 16 threads of an H100's host: docs/simulate.md, "Compiles ahead").
  int compile_threads = 1;
  CompileTimes compile_times = CompileTimes::Recorded;
};

// Which costs a recording holds of its own (any configuration with a non-zero time).
struct RecordedCosts {
  bool compile = false, framework = false, validation = false;
  // The mean recorded compile of the valid and of the failed configurations (CompileTimes::Mean).
  double mean_valid_compile_ms = 0, mean_failed_compile_ms = 0;
  static RecordedCosts of(const Recording& recording);
};

double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost, const RecordedCosts& recorded);
// The same, finding RecordedCosts itself (a pass over the recording: not for every test).
double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost);

// Replays a Recording: each test returns the recorded Result of its configuration (for one
// the recording lacks, status Skipped "not in the recording", never invented values), and
// advances a simulated clock by test_cost_ms. With CompileTimes::Mean its compile_ms is the
// mean it was charged, so that a searcher sees the compile times the clock charges. What a
// test is asked to measure cannot be honoured after the fact; it is charged, not invented.
// The Recording must outlive it, and the loop must tune over recording.space().
//
// On one device with CostModel::compile_threads, prepare() models the loop's compile pool:
// called when the loop takes a proposal into its pipeline, it starts that configuration's
// compile on the first free modelled compile stream at the current clock, and run() then waits for
// it, charging the rest of the test's cost. Called by run() itself (no prepare ahead), the
// compile is charged inline.
//
// With `devices` > 1 it simulates that many devices of the recording's kind: an event
// simulation on the simulated clock. Each device is busy until its test's cost has passed;
// the loop submits tests to free devices and next() advances the clock to the test that
// finishes first (ties: the one submitted first). The searcher's computation (charge) takes
// the loop's time while the devices run on.
class ReplayExecutor final : public Executor {
 public:
  explicit ReplayExecutor(const Recording& recording, CostModel cost = {}, std::size_t devices = 1);
  const ExecutorInfo& info() const override { return info_; }
  void start(const RunOptions&) override {
    clock_ms_ = 0;
    running_.clear();
    profiler_enabled_.assign(devices_, false);
    compiler_free_ms_.assign(devices_ == 1 ? static_cast<std::size_t>(std::max(0, cost_.compile_threads)) : 0, 0.0);
  }
  std::unique_ptr<PreparedTest> prepare(ConfigIndex config) override;
  std::size_t idle_compile_streams() const override;
  std::unique_ptr<PreparedTest> prepare_idle(ConfigIndex config) override;
  const Result& run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                    std::vector<std::string>& warnings) override;
  double clock_s() const override { return clock_ms_ / 1e3; }
  bool simulated() const override { return true; }
  void charge(double seconds) override {
    if (cost_.charge_searcher) clock_ms_ += seconds * 1e3;
  }
  std::size_t slots() const override { return devices_; }
  void submit(ConfigIndex config, std::unique_ptr<PreparedTest> prepared, const RunOptions& run) override;
  Finished next() override;

 private:
  // Whether the compile charged is not the recorded one: the mean of its outcome.
  bool charges_mean_compile() const { return recorded_.compile && cost_.compile_times == CompileTimes::Mean; }
  struct Running {
    double end_ms = 0;
    std::uint64_t order = 0;  // submission order, for ties
    ConfigIndex config = 0;
    std::size_t device = 0;
  };
  const Recording& recording_;
  CostModel cost_;
  RecordedCosts recorded_;
  ExecutorInfo info_;
  double clock_ms_ = 0;
  Result missing_;  // what a configuration the recording lacks replays as
  Result charged_;  // a recorded Result with the compile it was charged (CompileTimes::Mean)
  std::size_t devices_ = 1;
  std::vector<Running> running_;
  std::uint64_t submitted_ = 0;
  std::vector<double> compiler_free_ms_;  // when each modelled compile stream is next free
  std::vector<bool> profiler_enabled_;    // per device, as its worker leaves the profiler
  double profiler_cost_ms(std::size_t device, ConfigIndex config, const MeasureRequest& measure);
  // Starts `config`'s compile on the modelled stream free at `stream_free_ms`.
  std::unique_ptr<PreparedTest> compile_on(double& stream_free_ms, ConfigIndex config);
};

// The spec's space without the configurations `device` cannot launch at `size`: blocks of
// more threads than it allows, or more dynamic shared memory than a block may have (the
// spec's launch expressions, evaluated per configuration). Limits a kernel has of its own
// (registers, static shared memory) are known only once it is compiled and fail as tests.
struct DeviceLimitedSpace {
  SpaceDefinition definition;  // the spec's, with the device's limits as one more constraint
  std::string rule;            // that constraint in words; empty when nothing was added
};
DeviceLimitedSpace limit_to_device(const Spec& spec, const ProblemSize& size, const DeviceInfo& device);

// Tunes over `space` with `executor`. With a store, every finished test is committed as it
// completes, and configurations the store already holds in the tuning the run continues
// (TuneOptions::tuning) are served from it instead of being run again (resume). Before each
// test on a device the store records which configuration runs (Store::mark_running); a test
// that an earlier process of the same tuning never finished (it crashed or was killed) is
// stored as a `launch_error` when the run starts, so that resuming does not run it again.
//
// Fail early: when the first kFailEarlyTests tests the run makes all fail with the same
// error, of a kind that does not depend on the configuration (Result::
// independent_of_configuration: arguments the kernel does not take, a launch geometry that
// cannot be evaluated), every test would fail: tune() throws Error naming it, and stores
// none of them. Such failures are stored once the run goes on past them.
TuneSummary tune(const Space& space, Executor& executor, Searcher& searcher, Store* store,
                 const TuneOptions& options);
inline constexpr std::uint64_t kFailEarlyTests = 3;

// Tunes `spec` on `backend`: tune() with a DeviceExecutor for options.size.
TuneSummary tune(const Spec& spec, const Space& space, Backend& backend, Searcher& searcher,
                 Store* store, const TuneOptions& options);

}  // namespace steer
