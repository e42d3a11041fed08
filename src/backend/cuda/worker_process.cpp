// The backend's side of the worker process: starting, talking to, and ending it.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/cuda/worker.hpp"

extern char** environ;

namespace steer::cuda {
namespace {

// cuInit and the first context take a fraction of a second; allow for slow machines.
constexpr std::chrono::milliseconds kStartTimeout{120'000};

// A copy of `fd` numbered above the worker's fixed descriptors, so that placing one
// there cannot overwrite the other.
UniqueFd above_fixed_fds(int fd) {
  UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, kWorkerMemoryFd + 1));
  if (copy.get() < 0) {
    throw BackendError("cannot duplicate a descriptor for the CUDA worker: " + system_error_text(errno));
  }
  return copy;
}

// Owns a posix_spawn_file_actions_t.
class SpawnActions {
 public:
  SpawnActions() { ::posix_spawn_file_actions_init(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  void place(int fd, int target) {
    if (int error = ::posix_spawn_file_actions_adddup2(&actions_, fd, target)) {
      throw BackendError("posix_spawn_file_actions_adddup2 failed: " + system_error_text(error));
    }
  }
  const posix_spawn_file_actions_t* get() const noexcept { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// This process's environment plus the marker that makes the new process a worker.
std::vector<std::string> worker_environment() {
  const std::string marker = std::string(kWorkerVariable) + "=";
  std::vector<std::string> environment;
  for (char** entry = environ; entry && *entry; ++entry) {
    if (!std::string_view(*entry).starts_with(marker)) environment.emplace_back(*entry);
  }
  environment.push_back(marker + "1");
  return environment;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {}", status);
}

}  // namespace

WorkerProcess::WorkerProcess(int device, const SharedMemory* memory, const SharedLayout* layout) {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw BackendError("socketpair failed for the CUDA worker: " + system_error_text(errno));
  }
  socket_ = UniqueFd(sockets[0]);
  UniqueFd worker_end;
  {
    UniqueFd low_numbered(sockets[1]);
    worker_end = above_fixed_fds(low_numbered.get());
  }

  SpawnActions actions;
  actions.place(worker_end.get(), kWorkerSocketFd);  // dup2 clears close-on-exec on the copy
  UniqueFd memory_fd;
  if (memory && memory->fd() >= 0) {
    memory_fd = above_fixed_fds(memory->fd());
    actions.place(memory_fd.get(), kWorkerMemoryFd);
  }

  std::vector<std::string> environment = worker_environment();
  std::vector<char*> environment_pointers;
  for (std::string& entry : environment) environment_pointers.push_back(entry.data());
  environment_pointers.push_back(nullptr);
  char program_name[] = "steer-cuda-worker";
  char* arguments[] = {program_name, nullptr};
  if (int error =
          ::posix_spawn(&pid_, "/proc/self/exe", actions.get(), nullptr, arguments, environment_pointers.data())) {
    pid_ = -1;
    throw BackendError("cannot start the CUDA worker process (posix_spawn of /proc/self/exe): " +
                       system_error_text(error));
  }
  worker_end.reset();  // only the worker holds its end now: its death reads as end of file here

  try {
    Setup setup;
    setup.device = device;
    setup.has_program = memory != nullptr;
    if (layout) setup.layout = *layout;
    send_message(socket_.get(), encode(setup));
    std::optional<MessageReader> hello = receive_message(socket_.get(), kStartTimeout);
    if (!hello) {
      throw BackendError(
          fmt::format("the CUDA worker process ended before it was ready ({}); it is this program "
                      "run again, so /proc/self/exe must be a program linked with Steer",
                      stop()));
    }
    hello_ = decode_hello(std::move(*hello));
  } catch (...) {
    stop();
    throw;
  }
  if (!hello_.problem.empty()) {
    stop();
    throw BackendError(hello_.problem);
  }
}

WorkerProcess::~WorkerProcess() { stop(); }

std::optional<RunReply> WorkerProcess::run(const RunRequest& request) {
  try {
    send_message(socket_.get(), encode(request));
  } catch (const BackendError&) {
    return std::nullopt;  // it died before the request
  }
  std::optional<MessageReader> reply = receive_message(socket_.get());
  if (!reply) return std::nullopt;
  return decode_run_reply(std::move(*reply));
}

std::string WorkerProcess::stop() {
  if (pid_ < 0) return ended_;
  socket_.reset();
  ::kill(pid_, SIGKILL);  // no-op if it has ended already; its exit stops its kernels
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  // ECHILD: the program reaps children itself (SIGCHLD ignored); nothing is known then.
  ended_ = reaped == pid_ ? describe_status(status) : "ended; its status is unknown";
  pid_ = -1;
  return ended_;
}

}  // namespace steer::cuda
