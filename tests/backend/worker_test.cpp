// What the backends share to run kernels in a worker process (src/backend/worker): the
// messages, the shared memory's layout, the heartbeat, and finding the worker program.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/worker/process.hpp"
#include "backend/worker/protocol.hpp"

namespace steer::worker {
namespace {

HostArgument bytes_argument(std::string name, std::size_t bytes, bool output) {
  return HostArgument{.name = std::move(name), .data = std::vector<std::byte>(bytes), .output = output};
}

TEST(WorkerProtocol, RunRepliesCarryAFailedMeasurementAndWhatTheFailureDependsOn) {
  RunReply reply;
  reply.status = Status::LaunchError;
  reply.message = "clSetKernelArg (argument 2 'n'): CL_INVALID_ARG_SIZE (-51)";
  reply.independent_of_configuration = true;
  reply.samples_ms = {1.0, 1.1};
  reply.measure_failed = "cuptiRangeProfilerStop failed: CUPTI_ERROR_UNKNOWN";
  reply.context_lost = true;
  reply.warnings = {"a warning"};
  MessageWriter written = encode(reply);
  RunReply read = decode_run_reply(MessageReader(written.bytes()));
  EXPECT_EQ(read.status, reply.status);
  EXPECT_EQ(read.message, reply.message);
  EXPECT_TRUE(read.independent_of_configuration);
  EXPECT_EQ(read.measure_failed, reply.measure_failed);
  EXPECT_TRUE(read.context_lost);
  EXPECT_EQ(read.samples_ms, reply.samples_ms);
  EXPECT_EQ(read.warnings, reply.warnings);
}

TEST(WorkerProtocol, RunRepliesCarryTheDeviceConditions) {
  RunReply reply;
  EXPECT_FALSE(decode_run_reply(MessageReader(encode(reply).bytes())).conditions) << "none read, none carried";
  reply.conditions = DeviceConditions{.sm_clock_mhz = 1410, .memory_clock_mhz = 3201, .power_watts = 699.5,
                                      .power_limit_watts = 700, .temperature_c = 63, .throttle = "power cap"};
  reply.warnings = {"after the conditions"};
  RunReply read = decode_run_reply(MessageReader(encode(reply).bytes()));
  ASSERT_TRUE(read.conditions);
  EXPECT_EQ(read.conditions->sm_clock_mhz, 1410);
  EXPECT_EQ(read.conditions->memory_clock_mhz, 3201);
  EXPECT_EQ(read.conditions->power_watts, 699.5);
  EXPECT_EQ(read.conditions->power_limit_watts, 700);
  EXPECT_EQ(read.conditions->temperature_c, 63);
  EXPECT_EQ(read.conditions->throttle, "power cap");
  EXPECT_TRUE(std::isnan(read.conditions->other_load));
  EXPECT_EQ(read.warnings, reply.warnings);
}

TEST(WorkerProtocol, TheSetupCarriesTheDeviceAndTheLayout) {
  worker::Setup setup{.platform = 1, .device = 2, .has_program = true,
              .layout = layout_arguments({bytes_argument("in", 100, false), bytes_argument("out", 10, true)})};
  worker::Setup read = decode_setup(MessageReader(encode(setup).bytes()));
  EXPECT_EQ(read.platform, 1);
  EXPECT_EQ(read.device, 2);
  EXPECT_TRUE(read.has_program);
  EXPECT_EQ(read.layout.inputs_offset, setup.layout.inputs_offset);
  EXPECT_EQ(read.layout.outputs_offset, setup.layout.outputs_offset);
  EXPECT_EQ(read.layout.total_bytes, setup.layout.total_bytes);
  ASSERT_EQ(read.layout.arguments.size(), 2u);
  EXPECT_EQ(read.layout.arguments[1].output_offset, setup.layout.arguments[1].output_offset);
}

// The heartbeat has a page of its own, and so do the inputs, which a worker can then
// protect from its kernels; every slot is 64-byte aligned.
TEST(WorkerProtocol, TheLayoutPutsTheHeartbeatInputsAndOutputsOnPagesOfTheirOwn) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  SharedLayout layout = layout_arguments({bytes_argument("a", 3, false), bytes_argument("b", 5, true)});
  EXPECT_EQ(layout.inputs_offset, page);
  EXPECT_EQ(layout.arguments[0].offset, page);
  EXPECT_EQ(layout.arguments[1].offset, page + 64);
  EXPECT_EQ(layout.outputs_offset % page, 0u);
  EXPECT_GE(layout.outputs_offset, page + 64 + 5);
  EXPECT_EQ(layout.arguments[1].output_offset, layout.outputs_offset);
  EXPECT_EQ(layout.total_bytes, layout.outputs_offset + 5);
}

TEST(WorkerHeartbeat, SaysByWhenTheWorkerPromisedToBeDone) {
  std::vector<std::byte> memory(64);
  Heartbeat worker(memory), watchdog(memory);
  EXPECT_FALSE(watchdog.deadline()) << "no promise before the first";
  const auto before = Heartbeat::Clock::now();
  worker.promise(std::chrono::milliseconds(1500));
  ASSERT_TRUE(watchdog.deadline());
  EXPECT_GE(*watchdog.deadline(), before + std::chrono::milliseconds(1500));
  EXPECT_LE(*watchdog.deadline(), Heartbeat::Clock::now() + std::chrono::milliseconds(1500));
  worker.idle();
  EXPECT_FALSE(watchdog.deadline());
  Heartbeat none;  // no shared memory (a worker only asked to describe its device)
  none.promise(std::chrono::seconds(1));
  EXPECT_FALSE(none.deadline());
}

// The build puts steer-worker beside steer, where the library finds it; STEER_WORKER
// chooses another, and one that is not there is an error naming it.
TEST(WorkerExecutable, IsFoundInTheBuildAndChosenBySteerWorker) {
  const std::filesystem::path found = worker_executable();
  EXPECT_EQ(found.filename(), "steer-worker");
  EXPECT_EQ(::access(found.c_str(), X_OK), 0) << found;

  ::setenv("STEER_WORKER", "/nonexistent/steer-worker", 1);
  try {
    worker_executable();
    ADD_FAILURE() << "a STEER_WORKER that does not exist was accepted";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/steer-worker"), std::string::npos) << e.what();
  }
  ::setenv("STEER_WORKER", found.c_str(), 1);
  EXPECT_EQ(worker_executable(), found);
  ::unsetenv("STEER_WORKER");
}

}  // namespace
}  // namespace steer::worker
