// Tuning over MPI ranks: rank 0 hands tests to the other ranks, each serving them on its own
// device. The only file that includes mpi.h. Messages are JSON text:
//   0 -> r  start   the RunOptions the rank starts its device with
//   r -> 0  ready   {"ok", "error", "host", "device"}
//   0 -> r  test    {"config", "run"}
//   r -> 0  result  {"result"} (Steer JSON of a Result, and "warnings"), or {"error"}
//   0 -> r  stop    the run is over
//   0 -> r  alive   (empty) every second from join to the end, so that a serving rank whose
//                   rank 0 died (the launcher letting the job go on) notices, and ends
// Rank 0 calls MPI from the threads of its DevicePool, one at a time (a mutex;
// MPI_THREAD_SERIALIZED). It never blocks on another rank: every send and receive is
// nonblocking and polled, the mutex released between polls, so that a rank that died or hangs
// is found by its timeout rather than waited for. (A blocking MPI_Send to a killed rank can
// wait forever under Open MPI, holding the mutex and so every other rank's thread.)
#include "parallel/mpi_job.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>
#include <thread>

#include "steer/error.hpp"
#include "store/result_json.hpp"

namespace steer {
namespace {

using Json = store_detail::Json;
using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

enum Tag : int { kStart = 1, kReady = 2, kTest = 3, kResult = 4, kStop = 5, kAlive = 6 };
constexpr std::chrono::seconds kAlivePeriod{1};
// The text of a kStop that ends a rank without MPI_Finalize (another rank was lost).
constexpr const char* kStopAtOnce = "lost";

Json measure_json(const MeasureRequest& m) {
  return {{"counters", m.counters}, {"counters_optional", m.counters_optional}, {"metrics", m.metrics},
          {"energy", m.energy}, {"window_s", m.energy_window_s}};
}

MeasureRequest measure_from(const Json& j) {
  MeasureRequest m;
  m.counters = j.at("counters").get<bool>();
  m.counters_optional = j.value("counters_optional", false);
  m.metrics = j.at("metrics").get<std::vector<std::string>>();
  m.energy = j.at("energy").get<bool>();
  m.energy_window_s = j.at("window_s").get<double>();
  return m;
}

Json run_json(const RunOptions& run) {
  return {{"warmup", run.warmup},         {"repetitions", run.repetitions}, {"min_total_ms", run.min_total_ms},
          {"max_total_ms", run.max_total_ms}, {"timeout_ms", run.timeout_ms},   {"read_outputs", run.read_outputs},
          {"compare_outputs", run.compare_outputs}, {"measure", measure_json(run.measure)}};
}

RunOptions run_from(const Json& j) {
  RunOptions run;
  run.warmup = j.at("warmup").get<int>();
  run.repetitions = j.at("repetitions").get<int>();
  run.min_total_ms = j.at("min_total_ms").get<double>();
  run.max_total_ms = j.at("max_total_ms").get<double>();
  run.timeout_ms = j.at("timeout_ms").get<double>();
  run.read_outputs = j.at("read_outputs").get<bool>();
  run.compare_outputs = j.at("compare_outputs").get<bool>();
  run.measure = measure_from(j.at("measure"));
  return run;
}

void send(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receive(int from, int tag, MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  try {
    return std::stoi(value);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

struct MpiJob::Impl {
  int rank = 0, size = 1, local_rank = 0;
  std::string host;
  std::mutex mutex;  // one MPI call at a time
  bool handed_out = false;
  std::atomic<bool> lost = false;
  std::vector<char> gone;  // rank 0, under `mutex`: the ranks sent no more heartbeats

  // Rank 0: the heartbeat, a thread sending `kAlive` to every rank not lost.
  std::thread heartbeat;
  std::mutex heartbeat_mutex;
  std::condition_variable heartbeat_wake;
  bool heartbeat_stop = false;

  void start_heartbeat() {
    gone.assign(static_cast<std::size_t>(size), 0);
    heartbeat = std::thread([this] {
      static char nothing = 0;
      for (;;) {
        {
          std::unique_lock wait(heartbeat_mutex);
          if (heartbeat_wake.wait_for(wait, kAlivePeriod, [&] { return heartbeat_stop; })) return;
        }
        std::lock_guard lock(mutex);
        for (int r = 1; r < size; ++r) {
          if (gone[static_cast<std::size_t>(r)]) continue;
          // Empty, so there is no buffer to keep: the request is freed at once.
          MPI_Request request = MPI_REQUEST_NULL;
          MPI_Isend(&nothing, 0, MPI_CHAR, r, kAlive, MPI_COMM_WORLD, &request);
          MPI_Request_free(&request);
        }
      }
    });
  }
  void stop_heartbeat() {
    if (!heartbeat.joinable()) return;
    {
      std::lock_guard wait(heartbeat_mutex);
      heartbeat_stop = true;
    }
    heartbeat_wake.notify_all();
    heartbeat.join();
  }
  // Rank 0: no more heartbeats to `rank` (before it is told to stop: one that has ended
  // could make a later send fail).
  void quiet(int rank) {
    std::lock_guard lock(mutex);
    gone[static_cast<std::size_t>(rank)] = 1;
  }
  // Rank 0: `rank` gave no sign of life in time; the job cannot end in order.
  void lose(int rank) {
    lost = true;
    quiet(rank);
  }
  // Sends and receives to or from a lost rank that never completed. MPI may still write or
  // read their buffers, so these stay where they are until the job is aborted.
  struct Abandoned {
    std::unique_ptr<std::string> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Abandoned> abandoned;

  // Polls `request` (over `buffer`) until it completes or `deadline` passes; whether
  // it completed. One that did not takes `buffer` into `abandoned`.
  bool complete(MPI_Request request, std::unique_ptr<std::string>& buffer, Clock::time_point deadline) {
    for (auto pause = std::chrono::microseconds(20);; pause = std::min(2 * pause, std::chrono::microseconds(2000))) {
      {
        std::lock_guard lock(mutex);
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return true;
        if (Clock::now() > deadline) {
          abandoned.push_back(Abandoned{std::move(buffer), request});
          return false;
        }
      }
      std::this_thread::sleep_for(pause);
    }
  }

  // Sends `text` to `to`; false when the send did not complete within `timeout_s` (the rank
  // is gone, or hangs without receiving). Rank 0 to the others, and their answers to it.
  bool send_within(std::string text, int to, int tag, double timeout_s) {
    const Clock::time_point deadline = Clock::now() + seconds(timeout_s);
    auto buffer = std::make_unique<std::string>(std::move(text));
    MPI_Request request = MPI_REQUEST_NULL;
    {
      std::lock_guard lock(mutex);
      MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_CHAR, to, tag, MPI_COMM_WORLD, &request);
    }
    return complete(request, buffer, deadline);
  }

  // Rank 0: the next message of `tag` from `from`, or nullopt when `timeout_s` passes first
  // or `interrupt` is set (`interrupted` then says so).
  std::optional<std::string> await(int from, int tag, double timeout_s, const std::atomic<bool>* interrupt,
                                   bool* interrupted = nullptr) {
    const Clock::time_point deadline = Clock::now() + seconds(timeout_s);
    for (auto pause = std::chrono::microseconds(50);; pause = std::min(2 * pause, std::chrono::microseconds(2000))) {
      std::unique_ptr<std::string> text;
      MPI_Request request = MPI_REQUEST_NULL;
      bool matched = false;
      {
        std::lock_guard lock(mutex);
        int flag = 0;
        MPI_Message message = MPI_MESSAGE_NULL;
        MPI_Status status;
        MPI_Improbe(from, tag, MPI_COMM_WORLD, &flag, &message, &status);
        if (flag) {
          // The message is this thread's alone now; a large one still needs its sender to
          // finish, so its receipt is polled too.
          int count = 0;
          MPI_Get_count(&status, MPI_CHAR, &count);
          text = std::make_unique<std::string>(static_cast<std::size_t>(count), '\0');
          MPI_Imrecv(text->data(), count, MPI_CHAR, &message, &request);
          matched = true;
        }
      }
      if (matched) {
        // One that began to arrive at the deadline still gets a moment to finish.
        const Clock::time_point receipt_deadline = std::max(deadline, Clock::now() + seconds(1.0));
        if (complete(request, text, receipt_deadline)) return std::move(*text);
        return std::nullopt;
      }
      if (interrupt && interrupt->load()) {
        if (interrupted) *interrupted = true;
        return std::nullopt;
      }
      if (Clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(pause);
    }
  }
};

namespace {

// Another rank, as rank 0's DevicePool sees it.
class RemoteSlot final : public Slot {
 public:
  RemoteSlot(MpiJob::Impl& job, int rank, double timeout_s) : job_(job), rank_(rank), timeout_s_(timeout_s) {}
  ~RemoteSlot() override {
    if (unresponsive_) return;  // it may be gone: nothing more is sent to it
    // A test abandoned by an interrupt still answers; its answer is read, then the rank stops.
    if (waiting_) job_.await(rank_, kResult, timeout_s_, nullptr);
    // After a lost rank the job cannot end in order (MPI_Finalize would wait for it): the
    // rank is told to exit at once instead.
    job_.quiet(rank_);
    if (!job_.send_within(job_.lost ? kStopAtOnce : "", rank_, kStop, timeout_s_)) lose();
  }

  std::string name() const override { return name_; }

  void start(const RunOptions& run) override {
    if (!job_.send_within(run_json(run).dump(), rank_, kStart, timeout_s_)) {
      lose();
      throw Error(fmt::format("rank {} took no start message within {} s", rank_, timeout_s_));
    }
    // Starting includes the reference outputs, computed on the rank's host: bounded by the
    // same timeout as a test.
    const std::optional<std::string> ready = job_.await(rank_, kReady, timeout_s_, run.interrupt);
    if (!ready) {
      lose();
      throw Error(fmt::format("rank {} did not start within {} s", rank_, timeout_s_));
    }
    const Json answer = Json::parse(*ready);
    name_ = fmt::format("rank {} on {} ({})", rank_, answer.value("host", std::string("?")),
                        answer.value("device", std::string("?")));
    if (!answer.at("ok").get<bool>()) {
      throw Error(fmt::format("rank {} could not start: {}", rank_, answer.value("error", std::string())));
    }
  }

  Result run(ConfigIndex config, const RunOptions& run, std::vector<std::string>& warnings) override {
    if (unresponsive_) throw SlotLost(fmt::format("{} stopped answering", name_));
    if (!job_.send_within(Json{{"config", config}, {"run", run_json(run)}}.dump(), rank_, kTest, timeout_s_)) {
      lose();
      throw SlotLost(fmt::format("{} took no test within {} s (--rank-timeout): it hangs or has died", name_,
                                 timeout_s_));
    }
    waiting_ = true;
    bool interrupted = false;
    const std::optional<std::string> answer = job_.await(rank_, kResult, timeout_s_, run.interrupt, &interrupted);
    if (interrupted) throw Interrupted(fmt::format("interrupted while {} ran a test", name_));
    if (!answer) {
      lose();
      throw SlotLost(fmt::format("{} gave no result within {} s (--rank-timeout): it hangs or has died", name_,
                                 timeout_s_));
    }
    waiting_ = false;
    const Json message = Json::parse(*answer);
    if (message.contains("error")) throw SlotLost(message.at("error").get<std::string>());
    for (const auto& warning : message.at("warnings")) warnings.push_back(warning.get<std::string>());
    Result result = store_detail::result_from_json(store_detail::Node(message.at("result")));
    result.config_index = config;
    return result;
  }

 private:
  // The rank gave no sign of life in time: nothing more is sent to it, and the job cannot
  // end in order.
  void lose() {
    unresponsive_ = true;
    job_.lose(rank_);
  }

  MpiJob::Impl& job_;
  int rank_;
  double timeout_s_;
  std::string name_ = fmt::format("rank {}", rank_);
  bool waiting_ = false;       // a test was sent and its answer not read
  bool unresponsive_ = false;  // gave no answer in time
};

// A serving rank's loop (MpiJob::serve): runs what rank 0 sends on `executor`, or, where it is
// null, answers the start and every test with `why` (MpiJob::refuse; `asked` then says whether
// rank 0 asked it to start).
std::uint64_t serve_rank(MpiJob::Impl& job, DeviceExecutor* executor, const std::string& why, double silence_s,
                         bool* asked) {
  // Ctrl-C reaches every rank under mpirun: rank 0 decides, and says stop.
  std::signal(SIGINT, SIG_IGN);
  const Clock::duration silence = seconds(silence_s);
  const auto rank_0_gone = [&](const std::string& what) {
    job.lost = true;
    return Error(fmt::format("rank {} on {}: {} within {} s: rank 0 has died or cannot reach this rank", job.rank,
                             job.host, what, silence_s));
  };
  const auto answer = [&](const std::string& text, int tag) {
    if (!job.send_within(text, 0, tag, silence_s)) throw rank_0_gone("rank 0 took no answer");
  };
  std::uint64_t served = 0;
  Clock::time_point heard = Clock::now();
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    MPI_Status status;
    int flag = 0;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag) {
      // Rank 0 sends kAlive every second: silence this long means it is gone.
      if (Clock::now() - heard > silence) throw rank_0_gone("no word from rank 0");
      std::this_thread::sleep_for(pause);
      pause = std::min(2 * pause, std::chrono::microseconds(10000));
      continue;
    }
    heard = Clock::now();
    pause = std::chrono::microseconds(50);
    const std::string text = receive(0, status.MPI_TAG, status);
    switch (status.MPI_TAG) {
      case kStop:
        if (text == kStopAtOnce) {
          std::fflush(nullptr);
          std::_Exit(0);
        }
        return served;
      case kStart: {
        if (!executor) {
          if (asked) *asked = true;
          answer(Json{{"ok", false}, {"host", job.host}, {"error", why}}.dump(), kReady);
          break;
        }
        Json ready = {{"ok", true}, {"host", job.host}, {"device", executor->info().device.name}};
        try {
          executor->start(run_from(Json::parse(text)));
        } catch (const std::exception& e) {
          ready["ok"] = false;
          ready["error"] = e.what();
        }
        answer(ready.dump(), kReady);
        break;
      }
      case kTest: {
        const Json test = Json::parse(text);
        const ConfigIndex config = test.at("config").get<ConfigIndex>();
        Json reply;
        try {
          if (!executor) throw Error(why);
          std::vector<std::string> warnings;
          const RunOptions run = run_from(test.at("run"));
          const std::unique_ptr<PreparedTest> prepared = executor->prepare(config);
          const Result& result = executor->run(config, prepared.get(), run, warnings);
          reply = {{"result", store_detail::result_to_json(result)}, {"warnings", warnings}};
        } catch (const std::exception& e) {
          reply = {{"error", fmt::format("rank {} on {}: {}", job.rank, job.host, e.what())}};
        }
        answer(reply.dump(), kResult);
        ++served;
        break;
      }
      case kAlive:
      default:
        break;
    }
  }
}

}  // namespace

bool mpi_built() noexcept { return true; }

std::unique_ptr<MpiJob> MpiJob::join() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    throw Error("MPI could not start (MPI_Init_thread failed)");
  }
  auto impl = std::make_unique<Impl>();
  MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl->size);
  // The rank's place on its node: what the launcher says (Open MPI, Slurm, MPICH), else the
  // ranks that share its node by MPI's own reckoning.
  impl->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("SLURM_LOCALID", env_int("MPI_LOCALRANKID", -1)));
  if (impl->local_rank < 0) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, impl->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &impl->local_rank);
    MPI_Comm_free(&node);
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  impl->host.assign(host, static_cast<std::size_t>(length));
  if (provided < MPI_THREAD_SERIALIZED && impl->rank == 0 && impl->size > 1) {
    throw Error("this MPI library cannot be called from several threads (MPI_THREAD_SERIALIZED), which rank 0 needs");
  }
  if (impl->rank == 0 && impl->size > 1) impl->start_heartbeat();
  return std::unique_ptr<MpiJob>(new MpiJob(std::move(impl)));
}

MpiJob::MpiJob(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiJob::~MpiJob() {
  impl_->stop_heartbeat();
  // A rank 0 that ended before it handed out a test (an error) still releases the others.
  if (impl_->rank == 0 && !impl_->handed_out) {
    for (int r = 1; r < impl_->size; ++r) send("", r, kStop);
  }
  MPI_Finalize();
}

int MpiJob::rank() const { return impl_->rank; }
int MpiJob::size() const { return impl_->size; }
int MpiJob::local_rank() const { return impl_->local_rank; }
std::string MpiJob::host() const { return impl_->host; }
bool MpiJob::lost_a_rank() const { return impl_->lost; }

void MpiJob::abort(int code) {
  std::lock_guard lock(impl_->mutex);  // the heartbeat's MPI calls and this one, one at a time
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::vector<std::unique_ptr<Slot>> MpiJob::remote_slots(double timeout_s) {
  if (impl_->rank != 0) throw Error("only rank 0 hands out tests");
  impl_->handed_out = true;
  std::vector<std::unique_ptr<Slot>> slots;
  for (int r = 1; r < impl_->size; ++r) slots.push_back(std::make_unique<RemoteSlot>(*impl_, r, timeout_s));
  return slots;
}

std::uint64_t MpiJob::serve(DeviceExecutor& executor, double silence_s) {
  return serve_rank(*impl_, &executor, {}, silence_s, nullptr);
}

bool MpiJob::refuse(const std::string& why, double silence_s) {
  bool asked = false;
  serve_rank(*impl_, nullptr, why, silence_s, &asked);
  return asked;
}

}  // namespace steer
