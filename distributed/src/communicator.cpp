#include "bulkgnn/distributed/communicator.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>

#include <utility>

namespace bulkgnn::distributed {

traffic& traffic::operator+=(const traffic& other) {
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  calls += other.calls;
  seconds += other.seconds;
  return *this;
}

void traffic_log::add(const std::string& stage, const traffic& t) {
  const std::lock_guard lock(mutex_);
  stages_[stage] += t;
}

std::map<std::string, traffic> traffic_log::all() const {
  const std::lock_guard lock(mutex_);
  return stages_;
}

namespace detail {
void check(int mpi_result, const char* call) {
  if (mpi_result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_result, text, &length);
  throw error(fmt::format("{} failed: {}", call, std::string(text, length)));
}
}  // namespace detail

double wall_seconds() { return MPI_Wtime(); }

communicator::communicator(MPI_Comm parent, std::string stage, traffic_log& log)
    : stage_(std::move(stage)), log_(&log) {
  detail::check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

communicator::communicator(MPI_Comm owned, std::string stage, traffic_log& log, bool)
    : comm_(owned), stage_(std::move(stage)), log_(&log) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

communicator::~communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

communicator::communicator(communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      stage_(std::move(other.stage_)),
      log_(other.log_),
      rank_(other.rank_),
      size_(other.size_) {}

communicator communicator::split(int colour, int key, const std::string& stage) const {
  MPI_Comm part = MPI_COMM_NULL;
  detail::check(MPI_Comm_split(comm_, colour, key, &part), "MPI_Comm_split");
  return communicator(part, stage, *log_, true);
}

void communicator::barrier() {
  const double start = wall_seconds();
  detail::check(MPI_Barrier(comm_), "MPI_Barrier");
  count(0, 0, wall_seconds() - start);
}

void communicator::count(std::int64_t sent, std::int64_t received, double seconds) {
  log_->add(stage_, traffic{sent, received, 1, seconds});
}

}  // namespace bulkgnn::distributed
