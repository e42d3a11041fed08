// The stand-in for a build without MPI: joining a job says that support was not built.
#include "steer/error.hpp"
#include "parallel/mpi_job.hpp"

namespace steer {

struct MpiJob::Impl {};

bool mpi_built() noexcept { return false; }

std::unique_ptr<MpiJob> MpiJob::join() {
  throw Error(
      "MPI support was not built: install Open MPI (scripts/setup: openmpi-bin libopenmpi-dev) and build Steer "
      "again, or run steer as one process (--devices for several devices of one node)");
}

MpiJob::MpiJob(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MpiJob::~MpiJob() = default;
int MpiJob::rank() const { return 0; }
int MpiJob::size() const { return 1; }
int MpiJob::local_rank() const { return 0; }
std::string MpiJob::host() const { return {}; }
std::vector<std::unique_ptr<Slot>> MpiJob::remote_slots(double) { return {}; }
std::uint64_t MpiJob::serve(DeviceExecutor&, double) { return 0; }
bool MpiJob::refuse(const std::string&, double) { return false; }
bool MpiJob::lost_a_rank() const { return false; }
void MpiJob::abort(int code) { std::exit(code); }

}  // namespace steer
