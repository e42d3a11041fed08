// steer tune end to end: the small transpose tuned exhaustively from the command line,
// every configuration validated and stored. Minutes: label long.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "steer/backend.hpp"
#include "steer/spec.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"
#include "steer_cli_runner.hpp"
#include "e2e/tune_support.hpp"

namespace {

using namespace e2e;

TEST(TuneEndToEnd, TunesTheSmallTransposeExhaustivelyAndValidatesEveryConfiguration) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  steer::Space space = steer::Space::build(steer::load_spec(kSpec).space);
  fs::path db = fresh_db("full");
  Output out = run_steer("tune " + kSpec + " --backend opencl --size small --searcher exhaustive --repetitions 2 " +
                         "--warmup 0 --json --db " + db.string());
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto summary = nlohmann::json::parse(out.output);
  EXPECT_EQ(summary["tests"].get<std::uint64_t>(), space.size());
  EXPECT_EQ(summary["valid"].get<std::uint64_t>(), space.size()) << "every valid configuration must validate";
  EXPECT_EQ(summary["failed"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(summary["stop_reason"], "space exhausted");
  ASSERT_TRUE(summary["best"].is_object());
  EXPECT_GT(summary["best"]["time_ms"].get<double>(), 0.0);

  std::vector<steer::Result> stored = stored_results(db);
  ASSERT_EQ(stored.size(), space.size());
  for (const steer::Result& result : stored) {
    EXPECT_EQ(result.status, steer::Status::Ok) << result.key() << ": " << result.message;
  }
}

}  // namespace
