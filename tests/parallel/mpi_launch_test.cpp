// Whether an MPI launcher started steer, read from the environment the launchers set, and
// srun's tasks started without an MPI plugin, which steer refuses (docs/parallel.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "parallel/mpi_job.hpp"

namespace {

// Sets the variables a launcher would, with every other launcher variable unset; restores
// them all afterwards.
class LauncherEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kNames) {
      if (auto it = saved_.find(name); it != saved_.end()) {
        setenv(name, it->second.c_str(), 1);
      } else {
        unsetenv(name);
      }
    }
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }

 private:
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                                           "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"};
  std::map<std::string, std::string> saved_;
};

TEST_F(LauncherEnvironment, WithoutALauncherThereIsNoJob) {
  EXPECT_EQ(steer::mpi_launched_size(), std::nullopt);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
}

TEST_F(LauncherEnvironment, MpirunSaysHowManyProcessesItStarted) {
  set("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_EQ(steer::mpi_launched_size(), 4);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
}

TEST_F(LauncherEnvironment, SrunWithPmixCountsTheTasksOfItsStep) {
  set("PMIX_RANK", "0");
  set("SLURM_STEP_NUM_TASKS", "3");
  EXPECT_EQ(steer::mpi_launched_size(), 3);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
}

TEST_F(LauncherEnvironment, SrunWithPmi2SaysTheSize) {
  set("PMI_SIZE", "2");
  set("PMI_RANK", "1");
  set("SLURM_STEP_NUM_TASKS", "2");
  EXPECT_EQ(steer::mpi_launched_size(), 2);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
}

TEST_F(LauncherEnvironment, SrunWithoutAnMpiPluginIsToldApart) {
  set("SLURM_STEP_NUM_TASKS", "3");
  EXPECT_EQ(steer::mpi_launched_size(), std::nullopt);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), 3);
}

TEST_F(LauncherEnvironment, ABatchScriptOfManyTasksRunningSteerOnceIsNoJob) {
  // sbatch -n 16 runs its script once, in a step of one task.
  set("SLURM_NTASKS", "16");
  set("SLURM_STEP_NUM_TASKS", "1");
  EXPECT_EQ(steer::mpi_launched_size(), std::nullopt);
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
}

TEST_F(LauncherEnvironment, AVariableThatIsNoNumberIsIgnored) {
  set("SLURM_STEP_NUM_TASKS", "many");
  EXPECT_EQ(steer::srun_tasks_without_mpi(), std::nullopt);
  set("OMPI_COMM_WORLD_SIZE", "");
  EXPECT_EQ(steer::mpi_launched_size(), std::nullopt);
}

}  // namespace
