#pragma once
// Tuning over the ranks of an MPI job: `mpirun -np N steer tune SPEC ...`, or `srun` under
// Slurm, one rank per device. Rank 0 runs the loop: the searcher, the store and its own
// device; every other rank opens its own device, and runs the tests rank 0 hands it,
// sending each Result back. To the loop each other rank is one more Slot of a DevicePool.
//
//   std::unique_ptr<steer::MpiJob> job = steer::MpiJob::join();
//   if (job->rank() == 0) {
//     tuner.also_on(job->remote_slots(600));   // then tuner.tune(...) as ever
//   } else {
//     job->serve(*tuner.make_executor(), 60);   // until rank 0 is done (or silent 60 s)
//   }
//
// MPI is optional at build time (CMake's find_package(MPI)); without it MpiJob::join throws
// Error saying so, and nothing else of Steer needs it. Only src/parallel/ includes mpi.h.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "steer/tuner.hpp"

namespace steer {

// The number of processes an MPI launcher started this one among, read from the
// environment the launchers set (Open MPI's OMPI_COMM_WORLD_SIZE, PMI_SIZE of MPICH, Intel
// MPI and srun --mpi=pmi2, PMIX_RANK with SLURM_STEP_NUM_TASKS of srun --mpi=pmix); nullopt
// when no launcher started it. Needs no MPI library: a build without MPI support uses it to
// say so.
std::optional<int> mpi_launched_size();
// The task count of a Slurm job step of several tasks that srun started without an MPI
// plugin (its MpiDefault=none and no --mpi): the tasks cannot form one job, and each would
// tune on its own. nullopt otherwise.
std::optional<int> srun_tasks_without_mpi();
// Whether this build has MPI support.
bool mpi_built() noexcept;

class MpiJob {
 public:
  // Joins the job (MPI_Init_thread). Throws Error when MPI support was not built or MPI
  // cannot start.
  static std::unique_ptr<MpiJob> join();
  ~MpiJob();  // MPI_Finalize
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const;
  int size() const;
  // The rank's place among the ranks of its node (0, 1, ... per node): the device it uses
  // unless told otherwise.
  int local_rank() const;
  std::string host() const;

  // Rank 0: one Slot per other rank. A rank that gives no answer to a test within
  // `timeout_s` seconds (it hangs, or died without the launcher ending the job) is lost: its
  // test is recorded as failed, it is handed no more, and the run goes on on the others.
  std::vector<std::unique_ptr<Slot>> remote_slots(double timeout_s);
  // The other ranks: starts `executor` as rank 0 says, then runs each test rank 0 sends and
  // sends its Result back, until rank 0 says the run is over. Returns the tests it ran.
  // Rank 0 says it is alive every second; after `silence_s` seconds without a word from it
  // (it died, and the launcher let the job go on), or an answer it does not take within
  // that time, throws Error, and lost_a_rank() is then true.
  std::uint64_t serve(DeviceExecutor& executor, double silence_s);
  // Another rank that could not get ready to serve (its device, say, would not open): answers
  // rank 0's start with `why`, so that rank 0 ends the run in order and says why, then waits
  // for rank 0's stop as serve() does. Whether rank 0 asked (else it stopped first, with an
  // error of its own).
  bool refuse(const std::string& why, double silence_s);
  // Whether a rank was lost during the run (rank 0), or rank 0 was (another rank): the job
  // then cannot end in order, and abort() ends every rank once the results are stored.
  bool lost_a_rank() const;
  [[noreturn]] void abort(int code);

  struct Impl;

 private:
  explicit MpiJob(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steer
