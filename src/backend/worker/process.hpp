#pragma once
// The worker process: a child that owns the device for a backend, so that no kernel can
// take the tuner down.
//
// Why a process. A kernel that faults (an illegal address on a GPU, a wild write on a CPU
// device) leaves the device unusable, or kills the process it runs in: on the H200's driver
// (580) every CUDA context of the process fails from then on, and on PoCL a write far out of
// bounds is a segmentation fault. A kernel that never finishes cannot be stopped from inside
// the process either: cuCtxDestroy waits for it, and an OpenCL queue cannot drop it. Ending
// the process that owns the device does both. So the backend runs kernels in a worker and
// replaces the worker when that happens; the configuration is recorded as a launch error or
// a timeout, and tuning goes on.
//
// The worker is its own program, `steer-worker BACKEND` (apps/steer-worker), found by
// worker_executable(). It is not this program run again: a program that loads Steer as a
// library (a Python extension, a plugin) has no main() of Steer's to serve as a worker.
//
// Watching it. The worker bounds every launch by RunOptions::timeout_ms itself and, past
// it, replies `timeout` and ends. Behind that, the backend keeps a watchdog: while it waits
// for a reply it reads the worker's heartbeat (protocol.hpp) and ends a worker that
// overran its own promise by kWatchdogGrace, and it ends the worker at once when
// RunOptions::interrupt is set (Ctrl-C), throwing Interrupted. The worker itself ignores
// SIGINT, which a terminal sends to the tuner and its worker alike.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "backend/worker/channel.hpp"
#include "backend/worker/protocol.hpp"

namespace steer::worker {

inline constexpr int kWorkerSocketFd = 3;  // where the worker finds its end of the channel
inline constexpr int kWorkerMemoryFd = 4;  // and the shared memory, when there is a program

// How far past its own promise a worker may run before the watchdog ends it: the promise
// covers a launch, not the restoring, reading back or loading around it.
inline constexpr std::chrono::seconds kWatchdogGrace{30};

// The steer-worker program, the first of: $STEER_WORKER; steer-worker beside the running
// program; the installation the program was built against (use_installed_worker);
// ../libexec/steer-worker from the program (`steer` installed, wherever the installation
// went); where this build put it; where this build's configured prefix installs it. Throws
// BackendError naming every place it looked.
std::filesystem::path worker_executable();

// Where an installed Steer keeps its steer-worker. A program that finds Steer with
// find_package(Steer) calls it before main() (SteerConfig.cmake compiles the call into it):
// the installed archives were built before the installation's place was known
// (cmake --install --prefix).
void use_installed_worker(const char* path) noexcept;

// In the backend's process: one running worker.
class WorkerProcess {
 public:
  // Starts `steer-worker BACKEND` ("cuda", "opencl") and sends it `setup`. With `memory`
  // (which must outlive the worker), the worker uploads the arguments that setup.layout
  // places there, and the watchdog reads its heartbeat there, allowing it `watchdog_grace`
  // past each promise. Throws BackendError with the worker's reason (no driver, no such
  // device, out of device memory, ...) when it cannot serve.
  WorkerProcess(std::string_view backend, const Setup& setup, const SharedMemory* memory,
                std::chrono::milliseconds watchdog_grace = kWatchdogGrace);
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();  // kills the worker

  const Hello& hello() const noexcept { return hello_; }

  // The worker's reply, or nullopt when it died or the watchdog ended it; then stop() says
  // how, and hung() whether it was the watchdog. Throws Interrupted, after ending the
  // worker, once request.options.interrupt is set.
  std::optional<RunReply> run(const RunRequest& request);
  bool hung() const noexcept { return hung_; }

  // Kills the worker, if still running, and says how it ended ("killed by signal 9").
  std::string stop();

 private:
  // One request and its reply, the image left out unless `with_image`.
  std::optional<RunReply> exchange(const RunRequest& request, bool with_image);

  std::string backend_;
  pid_t pid_ = -1;
  UniqueFd socket_;
  Heartbeat heartbeat_;
  std::chrono::milliseconds watchdog_grace_;
  Hello hello_;
  bool hung_ = false;
  std::string ended_;  // set by stop()
  std::set<std::string> sent_images_;  // keys of the images this worker was sent
};

}  // namespace steer::worker
