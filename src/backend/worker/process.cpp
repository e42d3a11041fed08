// The backend's side of the worker process: finding, starting, watching and ending it.
#include "backend/worker/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace steer::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Opening a device takes a fraction of a second; allow for slow machines and large uploads.
constexpr std::chrono::milliseconds kStartTimeout{120'000};
// How often the watchdog looks at the heartbeat and the interrupt while it waits.
constexpr std::chrono::milliseconds kWatchInterval{50};

bool is_executable(const std::filesystem::path& file) {
  std::error_code error;
  return std::filesystem::is_regular_file(file, error) && ::access(file.c_str(), X_OK) == 0;
}

// A copy of `fd` numbered above the worker's fixed descriptors, so that placing one
// there cannot overwrite the other.
UniqueFd above_fixed_fds(int fd) {
  UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, kWorkerMemoryFd + 1));
  if (copy.get() < 0) {
    throw BackendError("cannot duplicate a descriptor for the worker process: " + system_error_text(errno));
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

// Owns a posix_spawnattr_t that starts the worker with no signal blocked, whatever the
// thread that starts it blocks.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    ::posix_spawnattr_init(&attributes_);
    sigset_t none;
    sigemptyset(&none);
    ::posix_spawnattr_setsigmask(&attributes_, &none);
    ::posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETSIGMASK);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attributes_); }
  const posix_spawnattr_t* get() const noexcept { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {}", status);
}

// Whether `socket` has something to read within `wait`.
bool readable_within(int socket, std::chrono::milliseconds wait) {
  pollfd ready{socket, POLLIN, 0};
  const int result = ::poll(&ready, 1, static_cast<int>(wait.count()));
  if (result < 0 && errno != EINTR) throw BackendError("cannot wait for the worker process: " + system_error_text(errno));
  return result > 0;
}

// The installation's worker, once a program built against one said where it is.
std::string& installed_worker() {
  static std::string path;
  return path;
}

}  // namespace

void use_installed_worker(const char* path) noexcept {
  try {
    installed_worker() = path ? path : "";
  } catch (...) {  // out of memory before main(): the other places are still looked at
  }
}

std::filesystem::path worker_executable() {
  std::vector<std::string> looked;
  if (const char* chosen = std::getenv("STEER_WORKER"); chosen && *chosen) {
    if (is_executable(chosen)) return chosen;
    throw BackendError(fmt::format("STEER_WORKER is '{}', which is not an executable file", chosen));
  }
  looked.push_back("$STEER_WORKER (not set)");
  std::vector<std::filesystem::path> candidates;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back(self.parent_path() / "steer-worker");
  if (!installed_worker().empty()) candidates.emplace_back(installed_worker());
  if (!error) candidates.push_back((self.parent_path().parent_path() / "libexec" / "steer-worker").lexically_normal());
  candidates.emplace_back(STEER_WORKER_BUILD_PATH);
  candidates.emplace_back(STEER_WORKER_INSTALL_PATH);
  for (const std::filesystem::path& candidate : candidates) {
    if (is_executable(candidate)) return candidate;
    looked.push_back(candidate.string());
  }
  std::string places;
  for (const std::string& place : looked) places += (places.empty() ? "" : ", ") + place;
  throw BackendError(fmt::format("cannot find steer-worker, the program that runs kernels for Steer's backends; "
                                 "looked at {}. Set STEER_WORKER to its path",
                                 places));
}

WorkerProcess::WorkerProcess(std::string_view backend, const Setup& setup, const SharedMemory* memory,
                             std::chrono::milliseconds watchdog_grace)
    : backend_(backend), watchdog_grace_(watchdog_grace) {
  const std::filesystem::path program = worker_executable();
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw BackendError("socketpair failed for the worker process: " + system_error_text(errno));
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
    heartbeat_ = Heartbeat(memory->bytes());
    heartbeat_.idle();  // a worker that died mid-launch left its promise behind
  }
  SpawnAttributes attributes;

  std::string program_name = "steer-worker";
  std::string backend_name = backend_;
  char* arguments[] = {program_name.data(), backend_name.data(), nullptr};
  if (int error = ::posix_spawn(&pid_, program.c_str(), actions.get(), attributes.get(), arguments, environ)) {
    pid_ = -1;
    throw BackendError(fmt::format("cannot start the worker process {}: {}", program.string(), system_error_text(error)));
  }
  worker_end.reset();  // only the worker holds its end now: its death reads as end of file here

  try {
    send_message(socket_.get(), encode(setup));
    std::optional<MessageReader> hello = receive_message(socket_.get(), kStartTimeout);
    if (!hello) {
      throw BackendError(fmt::format("the {} worker process ({}) ended before it was ready: {}", backend_,
                                     program.string(), stop()));
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
  // An image goes to a worker once (an OpenCL program binary is tens of kilobytes, and an
  // application's launch is one request per call); a worker that evicted it asks again.
  const bool sent_before = !request.image.empty() && sent_images_.contains(request.key);
  std::optional<RunReply> reply = exchange(request, !sent_before);
  if (reply && reply->image_needed) reply = exchange(request, true);
  if (reply && !request.image.empty()) sent_images_.insert(request.key);
  return reply;
}

std::optional<RunReply> WorkerProcess::exchange(const RunRequest& request, bool with_image) {
  try {
    send_message(socket_.get(), encode(request, with_image));
  } catch (const BackendError&) {
    return std::nullopt;  // it died before the request
  }
  const std::atomic<bool>* interrupt = request.options.interrupt;
  for (;;) {
    if (readable_within(socket_.get(), kWatchInterval)) {
      std::optional<MessageReader> reply = receive_message(socket_.get());
      if (!reply) return std::nullopt;
      heartbeat_.idle();
      return decode_run_reply(std::move(*reply));
    }
    if (interrupt && interrupt->load()) {
      stop();
      throw Interrupted(fmt::format("interrupted during the launch of '{}' (configuration {}); the {} worker "
                                    "process was ended to stop it",
                                    request.kernel_name, request.instance.config_index, backend_));
    }
    const std::optional<Clock::time_point> promised = heartbeat_.deadline();
    if (promised && Clock::now() > *promised + watchdog_grace_) {
      stop();
      hung_ = true;
      ended_ = fmt::format("it had promised to finish its step {:.1f} s earlier and did not answer, so the watchdog "
                           "ended it",
                           std::chrono::duration<double>(Clock::now() - *promised).count());
      return std::nullopt;
    }
  }
}

std::string WorkerProcess::stop() {
  if (pid_ < 0) return ended_;
  // Killed before its channel closes: a worker that sees the channel close exits by itself
  // (serve.cpp), and would then be reported as having exited rather than as killed.
  ::kill(pid_, SIGKILL);  // no-op if it has ended already; its exit stops its kernels
  socket_.reset();
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

}  // namespace steer::worker
