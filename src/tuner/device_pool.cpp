// Several devices at once: a pool of slots (devices of this process, MPI ranks), each driven
// by a thread of its own, handed tests by the loop and giving back results as they finish.
#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "steer/error.hpp"
#include "steer/tuner.hpp"

namespace steer {

DeviceSlot::DeviceSlot(std::unique_ptr<DeviceExecutor> executor, std::string name, std::unique_ptr<Backend> backend)
    : backend_(std::move(backend)), executor_(std::move(executor)), name_(std::move(name)) {}

void DeviceSlot::start(const RunOptions& run) { executor_->start(run); }

Result DeviceSlot::run(ConfigIndex config, const RunOptions& run, std::vector<std::string>& warnings) {
  const std::unique_ptr<PreparedTest> prepared = executor_->prepare(config);
  return executor_->run(config, prepared.get(), run, warnings);
}

struct DevicePool::State {
  struct Job {
    ConfigIndex config = 0;
    RunOptions run;
  };
  struct Worker {
    std::unique_ptr<Slot> slot;
    std::thread thread;
    std::optional<Job> job;  // handed out, not yet taken by the thread
    bool busy = false;       // a test is handed out or running
    bool lost = false;       // takes no more tests
    std::uint64_t done = 0;
  };
  // A finished test, or a lost slot's test (its message) to be recorded as failed.
  struct Done {
    Finished finished;
    ConfigIndex config = 0;
    std::optional<std::string> lost;
  };

  std::mutex mutex;
  std::condition_variable wake;      // a job or the end, for the workers
  std::condition_variable finished;  // a finished test, for next()
  std::vector<Worker> workers;
  std::deque<Done> done;
  std::exception_ptr interrupted;
  bool stopping = false;

  void work(std::size_t index) {
    Worker& worker = workers[index];
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping || worker.job; });
        if (stopping) return;
        job = std::move(*worker.job);
        worker.job.reset();
      }
      Done result;
      result.config = job.config;
      result.finished.slot = index;
      std::exception_ptr interrupt;
      try {
        result.finished.result = worker.slot->run(job.config, job.run, result.finished.warnings);
      } catch (const Interrupted&) {
        interrupt = std::current_exception();
      } catch (const std::exception& e) {
        // The slot is gone (SlotLost) or failed in a way a configuration does not explain: the
        // test is recorded as failed and the slot takes no more.
        result.lost = fmt::format("{} failed while running this configuration and was left out of the rest of the "
                                  "run: {}",
                                  worker.slot->name(), e.what());
      }
      std::lock_guard lock(mutex);
      worker.busy = false;
      if (result.lost) worker.lost = true;
      if (interrupt) {
        interrupted = interrupt;
      } else {
        ++worker.done;
        done.push_back(std::move(result));
      }
      finished.notify_all();
    }
  }
};

DevicePool::DevicePool(DeviceExecutor& primary, std::vector<std::unique_ptr<Slot>> slots)
    : primary_(primary), state_(std::make_unique<State>()) {
  if (slots.empty()) throw Error("a device pool needs at least one slot");
  for (std::unique_ptr<Slot>& slot : slots) state_->workers.push_back(State::Worker{std::move(slot), {}, {}, false, false, 0});
}

DevicePool::~DevicePool() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  for (State::Worker& worker : state_->workers) {
    if (worker.thread.joinable()) worker.thread.join();
  }
}

void DevicePool::start(const RunOptions& run) {
  for (State::Worker& worker : state_->workers) {
    if (worker.thread.joinable()) continue;  // started by an earlier run
    worker.slot->start(run);
  }
  for (std::size_t i = 0; i < state_->workers.size(); ++i) {
    if (!state_->workers[i].thread.joinable()) state_->workers[i].thread = std::thread([this, i] { state_->work(i); });
  }
}

// The final check runs on the primary device, from the loop's thread, once the slots are idle.
std::unique_ptr<PreparedTest> DevicePool::prepare(ConfigIndex config) { return primary_.prepare(config); }

const Result& DevicePool::run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                              std::vector<std::string>& warnings) {
  return primary_.run(config, prepared, run, warnings);
}

std::size_t DevicePool::slots() const {
  std::lock_guard lock(state_->mutex);
  std::size_t usable = 0;
  for (const State::Worker& worker : state_->workers) usable += worker.lost ? 0 : 1;
  return usable;
}

void DevicePool::submit(ConfigIndex config, std::unique_ptr<PreparedTest>, const RunOptions& run) {
  {
    std::lock_guard lock(state_->mutex);
    State::Worker* free = nullptr;
    for (State::Worker& worker : state_->workers) {
      if (!worker.busy && !worker.lost) {
        free = &worker;
        break;
      }
    }
    if (!free) throw Error("a test was handed to the device pool while every device was busy");
    free->busy = true;
    free->job = State::Job{config, run};
  }
  state_->wake.notify_all();
}

Executor::Finished DevicePool::next() {
  State::Done done;
  {
    std::unique_lock lock(state_->mutex);
    const auto running = [&] {
      for (const State::Worker& worker : state_->workers) {
        if (worker.busy) return true;
      }
      return false;
    };
    state_->finished.wait(lock, [&] { return !state_->done.empty() || state_->interrupted || !running(); });
    if (state_->interrupted) std::rethrow_exception(state_->interrupted);
    if (state_->done.empty()) throw Error("the device pool was asked for a result with no test running");
    done = std::move(state_->done.front());
    state_->done.pop_front();
  }
  if (done.lost) {
    Result failed = primary_.test_of(done.config);
    failed.status = Status::LaunchError;
    failed.message = *done.lost;
    done.finished.result = std::move(failed);
    done.finished.warnings.push_back(*done.lost);
  }
  return std::move(done.finished);
}

std::vector<std::pair<std::string, std::uint64_t>> DevicePool::tests_per_slot() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const State::Worker& worker : state_->workers) out.emplace_back(worker.slot->name(), worker.done);
  return out;
}

}  // namespace steer
