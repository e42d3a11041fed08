// The worker's serving loop, its lifeline to the backend's process and its crash report.
#include "backend/worker/serve.hpp"

#include <execinfo.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "backend/worker/process.hpp"
#include "core/fresh_memory.hpp"

namespace steer::worker {
namespace {

// A crash inside a library (a driver, a profiler, a kernel on a CPU device) ends the
// worker; say where on standard error before the default action, so the backend's
// "killed by signal" has a trail.
extern "C" void on_fatal_signal(int signal) {
  static const char header[] = "steer-worker: fatal signal; backtrace:\n";
  (void)!::write(STDERR_FILENO, header, sizeof header - 1);
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// Ends this process as soon as the backend's end of the channel closes, also while the
// loop is busy with a kernel that never finishes: a tuner killed with SIGKILL leaves no
// worker behind. Only the hang-up is asked for, so messages do not wake it.
void watch_the_backend(int socket) {
  std::thread([socket] {
    for (;;) {
      pollfd peer{socket, POLLRDHUP, 0};
      if (::poll(&peer, 1, -1) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) ::_exit(0);
    }
  }).detach();
}

}  // namespace

void serve(DeviceServer& server) {
  // The terminal sends Ctrl-C to the whole foreground process group, this worker included:
  // what an interrupt ends is the tuner's to decide (it ends this worker when it stops).
  std::signal(SIGINT, SIG_IGN);
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(signal, on_fatal_signal);
  try {
    UniqueFd socket(kWorkerSocketFd);
    watch_the_backend(socket.get());
    std::optional<MessageReader> message = receive_message(socket.get());
    if (!message) ::_exit(0);
    const Setup setup = decode_setup(std::move(*message));
    SharedMemory memory;
    Hello hello;
    try {
      if (setup.has_program) {
        memory = SharedMemory::map(kWorkerMemoryFd, setup.layout.total_bytes);
        // The arguments and outputs the tuner wrote, mapped here on every core at once.
        populate_pages(memory.bytes().data() + setup.layout.inputs_offset,
                       setup.layout.application_offset - setup.layout.inputs_offset);
      }
      server.start(setup, memory, hello);
    } catch (const Error& e) {
      hello.problem = e.what();
    }
    send_message(socket.get(), encode(hello));
    if (!hello.problem.empty()) ::_exit(0);

    Heartbeat heartbeat(memory.bytes());
    while ((message = receive_message(socket.get()))) {
      const RunRequest request = decode_run_request(std::move(*message));
      if (request.image_left_out && !server.holds_image(request.key)) {
        send_message(socket.get(), encode(RunReply{.image_needed = true}));
        continue;
      }
      const RunReply reply = server.run(request, heartbeat);
      heartbeat.idle();
      send_message(socket.get(), encode(reply));
      // A kernel may still be running, or the device refuses all work: only the end of this
      // process releases it. The backend starts a new worker.
      if (reply.context_lost) ::_exit(0);
    }
    ::_exit(0);  // the backend closed the channel
  } catch (...) {
    // The backend sees the channel close and reports that the worker died.
  }
  ::_exit(1);
}

}  // namespace steer::worker
