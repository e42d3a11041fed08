// Tuning inside the application's loop. The tuning loop (steer::tune) runs on a thread of its
// own with an executor whose tests are the application's calls: running a test waits for the
// next call to OnlineTuner::run, launches the configuration on the application's memory and
// hands the call back. Between calls the loop stores the test, lets the searcher observe it,
// and prepares (compiles, validates) the next configuration. Once the loop ends, every call
// launches the best configuration directly on the calling thread, in this process rather than
// the backend's worker unless OnlineOptions::in_process_once_converged is off.
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "steer/embed.hpp"
#include "tuner/host_load.hpp"

namespace steer {
namespace {

// Thrown inside the loop's thread when the OnlineTuner is destroyed while the loop waits for a
// call: it ends the loop without recording a test.
struct Stopped {};

}  // namespace

struct OnlineTuner::Impl {
  Tuner& tuner;
  OnlineOptions options;
  const Space& space;
  DeviceExecutor device;
  LaunchData data;  // the application's memory
  bool validates;

  std::mutex mutex;
  std::condition_variable changed;
  bool call_pending = false;         // the application waits in run()
  std::optional<OnlineStep> served;  // the answer to that call
  bool converged = false;
  bool in_process = false;  // the backend launches in this process (OnlineOptions::in_process_once_converged)
  bool stopping = false;
  std::atomic<bool> interrupt{false};
  std::optional<Result> best;
  std::optional<TuneSummary> summary;
  std::exception_ptr failure;  // what ended the loop's thread, for the next call
  // Once converged: the best configuration, compiled.
  std::unique_ptr<PreparedTest> best_prepared;
  Configuration best_configuration;
  std::thread loop;

  Impl(Tuner& t, OnlineOptions o)
      : tuner(t),
        options(o),
        space(t.space()),
        device(t.spec(), space, t.backend(), t.problem_size().name, t.callbacks()),
        data(t.launch_data()),
        validates(t.callbacks().reference || t.spec().reference.kind != Reference::Kind::None) {
    if (options.budget == 0) throw Error("OnlineTuner: a budget of 0 tests leaves nothing to run");
    if (options.calls_per_test < 1) throw Error("OnlineTuner: calls_per_test must be at least 1");
  }

  // In the loop's thread: waits for the application's next call; throws Stopped when stopping.
  void wait_for_call() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return (call_pending && !served) || stopping; });
    if (stopping) throw Stopped{};
  }

  void serve(OnlineStep step) {
    {
      std::lock_guard lock(mutex);
      served = std::move(step);
      call_pending = false;
    }
    changed.notify_all();
  }

  class Tests;  // the loop's executor
  void run_loop();
};

// The executor of the loop's tests: the device's compile and validation, and the
// application's calls for the timing.
class OnlineTuner::Impl::Tests final : public Executor {
 public:
  explicit Tests(Impl& online) : online_(online) {}
  const ExecutorInfo& info() const override { return online_.device.info(); }
  void start(const RunOptions& run) override { online_.device.start(run); }
  std::unique_ptr<PreparedTest> prepare(ConfigIndex config) override { return online_.device.prepare(config); }
  double clock_s() const override { return online_.device.clock_s(); }
  // Keyed in the store as Tuner::tune keys the same kernel, so that either continues the
  // other's tuning.
  TuningContent content() const override { return online_.device.content(); }

  const Result& run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                    std::vector<std::string>& warnings) override {
    Result& result = last_;
    if (online_.validates) {
      // Once on the data bound at the start, against the reference: a configuration that
      // computes wrong outputs never touches the application's.
      RunOptions once = run;
      once.warmup = 0;
      once.repetitions = 1;
      once.min_total_ms = 0;
      once.max_total_ms = 0;
      result = online_.device.run(config, prepared, once, warnings);
      if (!result.ok()) return result;
    } else {
      result = online_.device.test_of(config);
    }
    // The first call of a configuration is not timed when there are more: it pays for what a
    // device does at a kernel's first launch (PoCL compiles it for the work-group size).
    const int calls = online_.options.calls_per_test;
    std::vector<double> samples;
    // The device's conditions are those of the calls, not of the validation run: on a CPU
    // device, how busy other processes kept its cores from the first launch to the last (the
    // application's own work between calls is this process's, not theirs).
    result.conditions.reset();
    const bool on_host_cores = online_.device.info().device.runs_on_host_cores;
    std::optional<tuner_detail::CpuTimes> cpu_before;
    for (int call = 0; call < calls; ++call) {
      online_.wait_for_call();
      if (on_host_cores && call == 0) cpu_before = tuner_detail::read_cpu_times();
      const RunResult launched = online_.device.launch(*prepared, online_.data, online_.options.timeout_ms);
      if (launched.status != Status::Ok) {  // the call stays pending: the next configuration serves it
        result.status = launched.status;
        result.message = launched.message;
        return result;
      }
      const double kernel_ms = launched.time.median_ms;
      if (call > 0 || calls == 1) samples.push_back(kernel_ms);
      if (cpu_before && call == calls - 1) record_other_load(*cpu_before, result);
      online_.serve(OnlineStep{result.configuration, kernel_ms, true});
    }
    result.status = Status::Ok;
    result.time = TimingStats::from_samples(std::move(samples));
    return result;
  }

 private:
  static void record_other_load(const tuner_detail::CpuTimes& before, Result& result) {
    const std::optional<tuner_detail::CpuTimes> after = tuner_detail::read_cpu_times();
    const double load = after ? tuner_detail::other_load(before, *after) : std::nan("");
    if (std::isnan(load)) return;  // too short to tell
    if (!result.conditions) result.conditions.emplace();
    result.conditions->other_load = load;
  }

  Impl& online_;
  Result last_;
};

void OnlineTuner::Impl::run_loop() {
  try {
    Tests executor(*this);
    const std::unique_ptr<Searcher> searcher = tuner.make_searcher();
    TuneOptions tune_options = tuner.options();
    tune_options.stop = StopConditions{.tests = options.budget};
    // The hang timeout of the loop's own runs (validation) too, ahead of the spec's
    // kernel.timeout_ms and the Tuner's options, as for the calls.
    tune_options.timeout_ms = options.timeout_ms;
    // Measuring the best again would take more of the application's calls.
    tune_options.final_check = 0;
    tune_options.interrupt = &interrupt;
    const auto on_test = tune_options.on_test;
    tune_options.on_test = [&](const Result& result, const TuneProgress& progress) {
      if (progress.best) {
        std::lock_guard lock(mutex);
        best = progress.best;
      }
      if (on_test) on_test(result, progress);
    };
    TuneSummary result = steer::tune(space, executor, *searcher, tuner.open_store(), tune_options);
    std::unique_ptr<PreparedTest> prepared;
    if (result.best && !interrupt.load()) {
      prepared = device.prepare(result.best->config_index);
      if (options.in_process_once_converged) {
        try {
          in_process = tuner.backend().run_in_this_process(true);
        } catch (const BackendError& e) {  // the calls stay in the worker
          result.warnings.push_back(fmt::format("OnlineTuner: the best configuration keeps running in the worker "
                                                "process: {}",
                                                e.what()));
        }
      }
    }
    {
      std::lock_guard lock(mutex);
      if (result.best) {
        best = result.best;
        best_configuration = result.best->configuration;
      }
      best_prepared = std::move(prepared);
      summary = std::move(result);
      converged = true;
    }
  } catch (const Stopped&) {
    return;
  } catch (...) {
    std::lock_guard lock(mutex);
    failure = std::current_exception();
    converged = true;
  }
  changed.notify_all();
}

OnlineTuner::OnlineTuner(Tuner& tuner, OnlineOptions options) : impl_(std::make_unique<Impl>(tuner, options)) {
  impl_->loop = std::thread([impl = impl_.get()] { impl->run_loop(); });
}

OnlineTuner::~OnlineTuner() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->interrupt.store(true);
  impl_->changed.notify_all();
  impl_->loop.join();
  // The Tuner's later runs go back to the worker, where a failing kernel fails alone.
  if (impl_->in_process) {
    try {
      impl_->tuner.backend().run_in_this_process(false);
    } catch (...) {  // a destructor: nothing to report to
    }
  }
}

OnlineStep OnlineTuner::run() {
  Impl& impl = *impl_;
  {
    std::unique_lock lock(impl.mutex);
    if (!impl.converged) {
      impl.served.reset();
      impl.call_pending = true;
      impl.changed.notify_all();
      impl.changed.wait(lock, [&] { return impl.served.has_value() || impl.converged; });
      impl.call_pending = false;
      if (impl.served) {
        OnlineStep step = std::move(*impl.served);
        impl.served.reset();
        return step;
      }
    }
    if (impl.failure) std::rethrow_exception(impl.failure);
  }
  // Converged: nothing changes any more, and the loop's thread has finished with the device.
  if (!impl.best_prepared) {
    throw Error(fmt::format("OnlineTuner: no configuration of '{}' ran ({} tested): see the store or the loop's "
                            "on_test for why",
                            impl.device.info().spec_name, impl.summary ? impl.summary->tests : 0));
  }
  const RunResult launched = impl.device.launch(*impl.best_prepared, impl.data, impl.options.timeout_ms);
  if (launched.status != Status::Ok) {
    throw Error(fmt::format("OnlineTuner: the best configuration failed: {}", launched.message));
  }
  return OnlineStep{impl.best_configuration, launched.time.median_ms, false};
}

bool OnlineTuner::converged() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->converged;
}

std::optional<Configuration> OnlineTuner::best() const {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->best) return std::nullopt;
  return impl_->best->configuration;
}

std::optional<TuneSummary> OnlineTuner::summary() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->summary;
}

}  // namespace steer
