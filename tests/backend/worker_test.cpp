// What the backends share to run kernels in a worker process (src/backend/worker): the
// messages, the shared memory's layout, the heartbeat, and finding the worker program.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
  EXPECT_EQ(read.layout.application_offset, setup.layout.application_offset);
  EXPECT_EQ(read.layout.total_bytes, setup.layout.total_bytes);
  ASSERT_EQ(read.layout.arguments.size(), 2u);
  EXPECT_EQ(read.layout.arguments[1].output_offset, setup.layout.arguments[1].output_offset);
  EXPECT_EQ(read.layout.arguments[1].application_offset, setup.layout.arguments[1].application_offset);
}

TEST(WorkerProtocol, ARequestCarriesAnApplicationsLaunch) {
  RunRequest request;
  request.key = "key";
  request.instance.grid = {4, 1, 1};
  request.options.timeout_ms = 250;
  request.application = true;
  request.written = {1, 0, 1};
  request.read = {0, 1, 0};
  const RunRequest read = decode_run_request(MessageReader(encode(request).bytes()));
  EXPECT_EQ(read.key, "key");
  EXPECT_EQ(read.instance.grid, request.instance.grid);
  EXPECT_EQ(read.options.timeout_ms, 250);
  EXPECT_TRUE(read.application);
  EXPECT_EQ(read.written, request.written);
  EXPECT_EQ(read.read, request.read);
  EXPECT_FALSE(decode_run_request(MessageReader(encode(RunRequest{}).bytes())).application);
}

TEST(WorkerProtocol, RequestsAndRepliesCarryWhatIsComparedOnTheDeviceAndItsOutcome) {
  RunRequest request;
  request.options.read_outputs = false;
  request.options.compare_outputs = true;
  request.compared = {worker::ComparedOutput{.argument = 2, .ulps_bound = true, .abs = 0.5, .rel = 0.25, .ulps = 4}};
  request.expected_generation = 7;
  const RunRequest read = decode_run_request(MessageReader(encode(request).bytes()));
  EXPECT_FALSE(read.options.read_outputs);
  EXPECT_TRUE(read.options.compare_outputs);
  ASSERT_EQ(read.compared.size(), 1u);
  EXPECT_EQ(read.compared[0].argument, 2u);
  EXPECT_TRUE(read.compared[0].ulps_bound);
  EXPECT_EQ(read.compared[0].abs, 0.5);
  EXPECT_EQ(read.compared[0].rel, 0.25);
  EXPECT_EQ(read.compared[0].ulps, 4u);
  EXPECT_EQ(read.expected_generation, 7u);

  RunReply reply;
  reply.comparisons = {OutputComparison{.argument = 2, .elements = 100, .mismatches = 3, .max_abs_error = 1.5,
                                        .first_mismatch = 17, .first_actual = 2.5, .first_expected = 1.0}};
  reply.comparison_ms = 0.75;
  reply.comparison_failed = "out of device memory";
  const RunReply back = decode_run_reply(MessageReader(encode(reply).bytes()));
  ASSERT_EQ(back.comparisons.size(), 1u);
  EXPECT_EQ(back.comparisons[0].elements, 100u);
  EXPECT_EQ(back.comparisons[0].mismatches, 3u);
  EXPECT_EQ(back.comparisons[0].max_abs_error, 1.5);
  EXPECT_EQ(back.comparisons[0].first_mismatch, 17u);
  EXPECT_EQ(back.comparisons[0].first_actual, 2.5);
  EXPECT_EQ(back.comparisons[0].first_expected, 1.0);
  EXPECT_EQ(back.comparison_ms, 0.75);
  EXPECT_EQ(back.comparison_failed, "out of device memory");
}

// The expected outputs go to their own area of the shared memory; each request that asks to
// compare carries the comparisons and which contents to compare against; a worker that
// could not compare turns comparing off for the runs after.
TEST(WorkerProtocol, ExpectedOutputsAreWrittenOnceAndEveryRequestThatComparesNamesThem) {
  const std::vector<HostArgument> arguments{bytes_argument("in", 8, false), bytes_argument("out", 4, true)};
  const SharedLayout layout = layout_arguments(arguments);
  const SharedMemory memory = share_arguments(arguments, layout, "steer-test");
  const std::vector<std::byte> expected(4, std::byte{3});
  worker::ExpectedOutputs outputs;
  RunRequest before;
  before.options.read_outputs = false;
  before.options.compare_outputs = true;
  outputs.prepare(before);
  EXPECT_FALSE(before.options.compare_outputs) << "nothing to compare against yet";
  EXPECT_TRUE(before.options.read_outputs) << "so the outputs come back";

  outputs.set(layout, memory, {ExpectedOutput{.argument = 1, .bytes = expected, .comparison = {.abs = 0, .rel = 0}}});
  EXPECT_EQ(memory.bytes()[layout.arguments[1].expected_offset + 3], std::byte{3});
  RunRequest first;
  first.options.compare_outputs = true;
  outputs.prepare(first);
  ASSERT_EQ(first.compared.size(), 1u);
  EXPECT_EQ(first.compared[0].argument, 1u);
  outputs.set(layout, memory, {ExpectedOutput{.argument = 1, .bytes = expected}});
  RunRequest second;
  second.options.compare_outputs = true;
  outputs.prepare(second);
  EXPECT_NE(second.expected_generation, first.expected_generation) << "new contents, uploaded again";
  RunRequest not_asked;
  outputs.prepare(not_asked);
  EXPECT_TRUE(not_asked.compared.empty());

  RunReply failed;
  failed.comparison_failed = "no double precision";
  RunResult result;
  outputs.take(failed, result);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("no double precision"), std::string::npos);
  RunRequest after;
  after.options.compare_outputs = true;
  outputs.prepare(after);
  EXPECT_FALSE(after.options.compare_outputs);

  EXPECT_THROW(outputs.set(layout, memory, {ExpectedOutput{.argument = 0, .bytes = std::span(expected).first(4)}}),
               BackendError) << "an input";
  EXPECT_THROW(outputs.set(layout, memory, {ExpectedOutput{.argument = 1, .bytes = std::span(expected).first(2)}}),
               BackendError) << "of the wrong size";
}

// Backend::launch's data go to the application area and back, checked against the
// arguments' sizes before anything is sent.
TEST(WorkerProtocol, AnApplicationsDataTravelThroughItsOwnAreaOfTheSharedMemory) {
  HostArgument scalar{.name = "n", .is_buffer = false, .type = ElementType::I32, .data = std::vector<std::byte>(4)};
  const std::vector<HostArgument> arguments{bytes_argument("in", 8, false), bytes_argument("out", 4, true), scalar};
  const SharedLayout layout = layout_arguments(arguments);
  const SharedMemory memory = share_arguments(arguments, layout, "steer-test");
  const std::vector<std::byte> in(8, std::byte{7}), n(4, std::byte{9});
  std::vector<std::byte> out(4, std::byte{0});
  const LaunchData data{.inputs = {in, {}, n}, .outputs = {out}};
  RunRequest request;
  stage_launch_data(layout, memory, data, 250, request);
  EXPECT_TRUE(request.application);
  EXPECT_EQ(request.options.warmup, 0);
  EXPECT_EQ(request.options.repetitions, 1);
  EXPECT_EQ(request.options.timeout_ms, 250);
  EXPECT_EQ(request.written, (std::vector<std::uint8_t>{1, 0, 1}));
  EXPECT_EQ(request.read, (std::vector<std::uint8_t>{0, 1, 0}));
  EXPECT_EQ(memory.bytes()[layout.arguments[0].application_offset + 7], std::byte{7});
  EXPECT_EQ(memory.bytes()[layout.arguments[2].application_offset], std::byte{9});
  EXPECT_EQ(memory.bytes()[layout.arguments[0].offset], std::byte{0}) << "the loaded inputs stay as they were";

  memory.bytes()[layout.arguments[1].application_offset + 3] = std::byte{5};  // what a worker read back
  deliver_launch_outputs(layout, memory, data);
  EXPECT_EQ(out[3], std::byte{5});

  const std::vector<std::byte> wrong(3);
  RunRequest refused;
  EXPECT_THROW(stage_launch_data(layout, memory, LaunchData{.inputs = {wrong, {}, {}}}, 250, refused), BackendError);
  EXPECT_THROW(stage_launch_data(layout, memory, LaunchData{.inputs = {in}}, 250, refused), BackendError);
  std::vector<std::byte> small(3);
  EXPECT_THROW(stage_launch_data(layout, memory, LaunchData{.outputs = {small}}, 250, refused), BackendError);
}

// The heartbeat has a page of its own, and so do the inputs, which a worker can then
// protect from its kernels, the outputs and the application's data; every slot is 64-byte
// aligned.
TEST(WorkerProtocol, TheLayoutPutsTheHeartbeatInputsOutputsApplicationAndExpectedDataOnPagesOfTheirOwn) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  SharedLayout layout = layout_arguments({bytes_argument("a", 3, false), bytes_argument("b", 5, true)});
  EXPECT_EQ(layout.inputs_offset, page);
  EXPECT_EQ(layout.arguments[0].offset, page);
  EXPECT_EQ(layout.arguments[1].offset, page + 64);
  EXPECT_EQ(layout.outputs_offset % page, 0u);
  EXPECT_GE(layout.outputs_offset, page + 64 + 5);
  EXPECT_EQ(layout.arguments[1].output_offset, layout.outputs_offset);
  EXPECT_EQ(layout.application_offset % page, 0u);
  EXPECT_GE(layout.application_offset, layout.outputs_offset + 5);
  EXPECT_EQ(layout.arguments[0].application_offset, layout.application_offset);
  EXPECT_EQ(layout.arguments[1].application_offset, layout.application_offset + 64);
  // The expected outputs (Backend::expect_outputs), outputs only.
  EXPECT_EQ(layout.expected_offset % page, 0u);
  EXPECT_GE(layout.expected_offset, layout.application_offset + 64 + 5);
  EXPECT_EQ(layout.arguments[1].expected_offset, layout.expected_offset);
  EXPECT_EQ(layout.total_bytes, layout.expected_offset + 5);
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

// A program built against an installed Steer is told where that installation keeps its
// worker, which then comes before the build folder's; one that is gone is passed over.
TEST(WorkerExecutable, TheInstallationAProgramWasBuiltAgainstComesBeforeTheBuild) {
  const std::filesystem::path built = worker_executable();
  const std::filesystem::path installed =
      std::filesystem::temp_directory_path() / fmt::format("steer-worker-test-{}", ::getpid()) / "steer-worker";
  std::filesystem::create_directories(installed.parent_path());
  std::filesystem::copy_file(built, installed);
  use_installed_worker(installed.c_str());
  EXPECT_EQ(worker_executable(), installed);
  std::filesystem::remove_all(installed.parent_path());
  EXPECT_EQ(worker_executable(), built) << "an installation that is gone is passed over";
  use_installed_worker("");
}

}  // namespace
}  // namespace steer::worker
