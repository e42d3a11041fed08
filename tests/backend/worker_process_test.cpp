// The backend's side of a worker process (backend/worker/process.hpp), against a worker
// scripted here: this test program, started again as the worker, serves each request as
// STEER_TEST_WORKER says (hang while promising to be quick, die, answer).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "backend/worker/process.hpp"
#include "backend/worker/serve.hpp"

namespace steer::worker {
namespace {

using Clock = std::chrono::steady_clock;

class ScriptedServer final : public DeviceServer {
 public:
  explicit ScriptedServer(std::string script) : script_(std::move(script)) {}
  void start(const Setup&, SharedMemory&, Hello& hello) override { hello.device.name = "scripted"; }
  // "forget": it never keeps an image.
  bool holds_image(const std::string& key) override { return script_ != "forget" && images_.contains(key); }
  RunReply run(const RunRequest& request, Heartbeat& heartbeat) override {
    heartbeat.promise(std::chrono::milliseconds(10));
    if (script_ == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (script_ == "die") ::_exit(3);
    if (!request.image.empty()) images_.insert(request.key);
    return RunReply{.message = fmt::format("answered with {} bytes of image", request.image.size())};
  }

 private:
  std::string script_;
  std::set<std::string> images_;
};

// Started as the worker, this program serves before main() and never returns.
[[gnu::constructor]] void serve_if_started_as_the_scripted_worker() {
  if (const char* script = std::getenv("STEER_TEST_WORKER")) {
    ScriptedServer server(script);
    serve(server);
  }
}

// A worker of this program, scripted; with shared memory, so that it has a heartbeat.
class ScriptedWorker {
 public:
  explicit ScriptedWorker(const char* script, std::chrono::milliseconds grace = std::chrono::milliseconds(200))
      : memory_(SharedMemory::create(layout_.total_bytes, "steer-test-worker")) {
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    ::setenv("STEER_WORKER", self.c_str(), 1);
    ::setenv("STEER_TEST_WORKER", script, 1);
    worker_.emplace("scripted", Setup{.has_program = true, .layout = layout_}, &memory_, grace);
    ::unsetenv("STEER_TEST_WORKER");
    ::unsetenv("STEER_WORKER");
  }
  WorkerProcess& operator*() { return *worker_; }
  WorkerProcess* operator->() { return &*worker_; }

 private:
  SharedLayout layout_ = layout_arguments({});
  SharedMemory memory_;
  std::optional<WorkerProcess> worker_;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(WorkerProcess, AnswersAreRelayed) {
  ScriptedWorker worker("answer");
  EXPECT_EQ(worker->hello().device.name, "scripted");
  const std::optional<RunReply> reply = worker->run(RunRequest{});
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->message, "answered with 0 bytes of image");
}

// A kernel's image crosses to a worker once; a worker that no longer holds it asks again.
TEST(WorkerProcess, SendsAnImageOncePerWorkerAndAgainWhenAsked) {
  RunRequest request;
  request.key = "kernel";
  request.image.assign(1000, 'x');
  ScriptedWorker keeping("answer");
  EXPECT_EQ(keeping->run(request)->message, "answered with 1000 bytes of image");
  EXPECT_EQ(keeping->run(request)->message, "answered with 0 bytes of image") << "it holds the image";
  ScriptedWorker forgetting("forget");
  EXPECT_EQ(forgetting->run(request)->message, "answered with 1000 bytes of image");
  const std::optional<RunReply> again = forgetting->run(request);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->image_needed);
  EXPECT_EQ(again->message, "answered with 1000 bytes of image") << "sent again when asked";
}

// A worker that overruns its own promise (a driver call that never returns) is ended by the
// watchdog once the grace period has passed, and says so.
TEST(WorkerProcess, TheWatchdogEndsAWorkerThatOverrunsItsPromise) {
  ScriptedWorker worker("hang");
  const auto started = Clock::now();
  EXPECT_FALSE(worker->run(RunRequest{}));
  EXPECT_LT(seconds_since(started), 5);
  EXPECT_TRUE(worker->hung());
  EXPECT_NE(worker->stop().find("the watchdog ended it"), std::string::npos) << worker->stop();
}

TEST(WorkerProcess, AWorkerThatDiesSaysHow) {
  ScriptedWorker worker("die");
  EXPECT_FALSE(worker->run(RunRequest{}));
  EXPECT_FALSE(worker->hung());
  EXPECT_EQ(worker->stop(), "exited with status 3");
}

// An interrupt ends the worker at once, long before the watchdog would.
TEST(WorkerProcess, AnInterruptEndsTheWorkerAtOnce) {
  ScriptedWorker worker("hang", std::chrono::minutes(10));
  std::atomic<bool> interrupt{false};
  RunRequest request;
  request.options.interrupt = &interrupt;
  std::jthread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    interrupt = true;
  });
  const auto started = Clock::now();
  EXPECT_THROW(worker->run(request), Interrupted);
  EXPECT_LT(seconds_since(started), 5);
  EXPECT_NE(worker->stop().find("signal 9"), std::string::npos) << worker->stop();
}

}  // namespace
}  // namespace steer::worker
