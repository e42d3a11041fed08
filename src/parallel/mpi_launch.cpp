// Whether an MPI launcher started this process, from the environment it sets: read without
// MPI, so that a build without MPI support can say so when started by mpirun or srun.
#include <cstdlib>
#include <string>

#include "parallel/mpi_job.hpp"

namespace steer {

std::optional<int> mpi_launched_size() {
  // Open MPI's mpirun, MPICH/Intel MPI and srun --mpi=pmi2 (PMI).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    try {
      const int size = std::stoi(value);
      if (size > 0) return size;
    } catch (const std::exception&) {
      continue;
    }
  }
  // srun --mpi=pmix names the rank but not always the size: the step's task count says it.
  if (std::getenv("PMIX_RANK")) {
    const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
    try {
      return tasks ? std::stoi(tasks) : 2;  // unknown: joining finds the size
    } catch (const std::exception&) {
      return 2;
    }
  }
  return std::nullopt;
}

std::optional<int> srun_tasks_without_mpi() {
  if (mpi_launched_size()) return std::nullopt;
  // PMI_RANK: MPICH's and Intel MPI's Hydra set it, and srun --mpi=pmi2.
  if (std::getenv("PMI_RANK")) return std::nullopt;
  // The tasks of this job step: the batch script's own step counts 1 however many it may start.
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (!tasks) return std::nullopt;
  try {
    const int count = std::stoi(tasks);
    return count > 1 ? std::optional<int>(count) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace steer
