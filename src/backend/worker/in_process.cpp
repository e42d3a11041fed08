#include "backend/worker/in_process.hpp"

#include "steer/error.hpp"

namespace steer::worker {

InProcessDevice::InProcessDevice(std::unique_ptr<DeviceServer> server, const Setup& setup, SharedMemory& memory)
    : server_(std::move(server)) {
  Hello hello;  // what the device is: the backend knows already
  try {
    server_->start(setup, memory, hello);
  } catch (const Error& e) {
    throw BackendError(std::string("cannot open the device in this process: ") + e.what());
  }
}

InProcessDevice::~InProcessDevice() {
  if (lost_) (void)server_.release();  // deliberately leaked: see the header
}

RunReply InProcessDevice::run(const RunRequest& request) {
  RunReply reply = server_->run(request, heartbeat_);
  if (reply.context_lost) {
    lost_ = true;
    reply.context_lost = false;
    reply.message += "; launches went back to the worker process";
  }
  return reply;
}

}  // namespace steer::worker
