#pragma once
// The worker process's side (process.hpp says why there is one): a loop that takes the
// setup, opens the device through a backend's DeviceServer, and answers run requests until
// the backend closes the channel or a reply says the device is lost.
#include <memory>
#include <string>
#include <string_view>

#include "backend/worker/channel.hpp"
#include "backend/worker/protocol.hpp"

namespace steer::worker {

// What one backend does in the worker. Single-threaded: both calls come from the loop.
class DeviceServer {
 public:
  virtual ~DeviceServer() = default;
  // Opens device `setup.device` and describes it in `hello`; with setup.has_program, takes
  // the arguments from `memory` (laid out as setup.layout says). Throws Error, which the
  // backend receives as Hello::problem.
  virtual void start(const Setup& setup, SharedMemory& memory, Hello& hello) = 0;
  // Whether the image the backend sent under `key` is still loaded: a request without its
  // image (RunRequest::image) is run only then.
  virtual bool holds_image(const std::string& key) = 0;
  // Runs one request. Before each step that could hang (a launch), promises on `heartbeat`
  // when it will be done. A reply with context_lost set ends the worker.
  virtual RunReply run(const RunRequest& request, Heartbeat& heartbeat) = 0;
};

// Serves the backend on the channel this process was started with (kWorkerSocketFd) and
// never returns. It ends when the backend closes the channel, when the backend's process
// ends (however it ends), after a reply that says the device is lost, and on a fatal signal
// (after printing a backtrace to standard error).
[[noreturn]] void serve(DeviceServer& server);

// The worker for `backend` ("cuda", "opencl"), each defined by its backend (or by its
// stand-in when the backend was not built). Never return.
[[noreturn]] void serve_cuda_worker();
[[noreturn]] void serve_opencl_worker();

// What each backend's worker runs, for running it in the backend's own process
// (in_process.hpp). Defined only where the backend was built.
std::unique_ptr<DeviceServer> make_cuda_device_server();
std::unique_ptr<DeviceServer> make_opencl_device_server();

}  // namespace steer::worker
