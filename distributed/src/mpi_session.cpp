#include "bulkgnn/distributed/mpi_session.hpp"

#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace bulkgnn::distributed {

mpi_session::mpi_session(int& argc, char**& argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw error("MPI_Init_thread failed");
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw error(
        "this MPI library does not provide MPI_THREAD_MULTIPLE, which the pipeline needs (its "
        "stages communicate from their own threads)");
  }
  comm::detail::check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  comm::detail::check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

mpi_session::~mpi_session() {
  if (active()) MPI_Finalize();
}

bool mpi_session::launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

bool mpi_session::active() {
  int initialised = 0;
  int finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  return initialised && !finalised;
}

void mpi_session::print_on_this_rank(const std::string& message) {
  int rank = 0;
  int size = 1;
  if (active()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  fmt::print(stderr, "bulkgnn (rank {} of {}): {}\n", rank, size, message);
  std::fflush(stderr);
}

void mpi_session::abort_all(const std::string& message, int code) {
  print_on_this_rank(message);
  int size = 1;
  if (active()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace bulkgnn::distributed
