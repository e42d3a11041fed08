#pragma once
// The CUDA worker process: a child that owns the device for a CudaBackend.
//
// Why a process: on the H200's driver (580), an illegal address, misaligned access or
// trap leaves CUDA unusable for the whole process: a new context, a primary-context
// reset and even other existing contexts all fail with the same error. And a kernel
// that runs too long cannot be stopped: cuCtxDestroy waits for it. Ending the process
// that owns the context does both, so the backend runs the device in a worker and
// replaces the worker when that happens.
//
// Why exec and not fork: once libcuda is loaded into a process (NVRTC loads it during a
// compile), a forked child cannot initialise CUDA. The worker is therefore this same
// program executed again (/proc/self/exe) with STEER_CUDA_WORKER in its environment; a
// static constructor in the backend sees it and serves the device before main() runs.
// Every program that calls make_cuda_backend links that constructor; only a program
// that dlopens Steer later (a Python extension, say) would not have it: its worker would
// not answer, and make_cuda_backend would fail once the start timeout passed.
#include <sys/types.h>

#include <optional>
#include <string>

#include "backend/cuda/worker_channel.hpp"
#include "backend/cuda/worker_protocol.hpp"

namespace steer::cuda {

inline constexpr const char* kWorkerVariable = "STEER_CUDA_WORKER";
inline constexpr int kWorkerSocketFd = 3;  // where the worker finds its end of the channel
inline constexpr int kWorkerMemoryFd = 4;  // and the shared memory, when there is a program

// In the worker process: serves requests until the backend goes away, then exits.
[[noreturn]] void serve_as_worker();

// In the backend's process: one running worker.
class WorkerProcess {
 public:
  // Starts a worker for device `device`. With `memory`, the worker uploads the arguments
  // that `layout` places there. Throws BackendError with the worker's reason (no driver,
  // no such device, out of device memory, ...) when it cannot serve.
  WorkerProcess(int device, const SharedMemory* memory, const SharedLayout* layout);
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();  // kills the worker

  const Hello& hello() const noexcept { return hello_; }

  // The worker's reply, or nullopt when it died; then stop() says how.
  std::optional<RunReply> run(const RunRequest& request);

  // Kills the worker, if still running, and says how it ended ("killed by signal 9").
  std::string stop();

 private:
  pid_t pid_ = -1;
  UniqueFd socket_;
  Hello hello_;
  std::string ended_;  // set by stop()
};

}  // namespace steer::cuda
