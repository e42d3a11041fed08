#pragma once
// A backend's DeviceServer run in the backend's own process: what the worker does, without
// the round trip to it. For a caller that trusts one kernel and launches it often
// (OnlineTuner, once converged: Backend::run_in_this_process), where the two wake-ups of
// each round trip cost more than a short kernel's launch can spare. What it gives up is what
// the worker is for (process.hpp): a kernel that crashes takes this process down with it, and
// one that hangs cannot be stopped, only left behind.
#include <memory>

#include "backend/worker/serve.hpp"

namespace steer::worker {

class InProcessDevice {
 public:
  // Opens the device of `setup` in this process and uploads the arguments of `memory` (which
  // must outlive this), as a worker does when it starts. Throws BackendError with the
  // server's reason when it cannot.
  InProcessDevice(std::unique_ptr<DeviceServer> server, const Setup& setup, SharedMemory& memory);
  // A server whose device may still be running a kernel (see lost()) is left behind rather
  // than closed: closing it would wait for that kernel.
  ~InProcessDevice();
  InProcessDevice(const InProcessDevice&) = delete;
  InProcessDevice& operator=(const InProcessDevice&) = delete;

  // Whether the image under `key` is loaded already: a request for it may then leave the image
  // out (saving the copy of tens of kilobytes that each launch would make).
  bool holds_image(const std::string& key) { return server_->holds_image(key); }
  // Runs one request as the worker would; its image may be left out only where holds_image.
  // A reply that says the device is lost (a kernel that may still run, or a context that
  // refuses work) makes lost() true, says in its message that launches go back to the
  // worker, and no longer asks for the worker to be replaced: the worker is well.
  RunReply run(const RunRequest& request);
  // The backend then drops this and launches in its worker again.
  bool lost() const noexcept { return lost_; }

 private:
  std::unique_ptr<DeviceServer> server_;
  Heartbeat heartbeat_;  // none: nothing watches this process's own launches but their timeouts
  bool lost_ = false;
};

}  // namespace steer::worker
