// Whether an MPI launcher started this process, from the environment it sets: read without
// MPI, so that a build without MPI support can say so when started by mpirun or srun.
#include <cstdlib>
#include <string>

#include "parallel/mpi_job.hpp"

namespace steer {

std::optional<int> mpi_launched_size() {
  // Open MPI, MPICH/Intel MPI/Slurm's PMI, PMIx (Open MPI 5, srun --mpi=pmix).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    try {
      const int size = std::stoi(value);
      if (size > 0) return size;
    } catch (const std::exception&) {
      continue;
    }
  }
  return std::nullopt;
}

}  // namespace steer
