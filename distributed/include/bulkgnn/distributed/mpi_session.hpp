#pragma once

#include "bulkgnn/core/error.hpp"

#include <string>

namespace bulkgnn::distributed {

// An error that every rank raises at the same point with the same message
// (a collective check whose result every rank saw): each rank can end
// normally, since none is left waiting for another; no abort_all needed.
class collective_error : public error {
 public:
  using error::error;
};

// MPI for one bulkgnn process: initialised with MPI_THREAD_MULTIPLE, since
// pipeline stages communicate from their own threads on their own
// communicators (an error if the library cannot provide it), finalised on
// destruction.
class mpi_session {
 public:
  mpi_session(int& argc, char**& argv);
  ~mpi_session();
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  // True when mpirun/mpiexec (Open MPI, MPICH, Slurm's PMI) started this
  // process; a plain `bulkgnn ...` then runs without MPI.
  [[nodiscard]] static bool launched_by_mpi();
  // True between initialisation and finalisation.
  [[nodiscard]] static bool active();
  // Prints "bulkgnn (rank r of P): message" and ends every rank with
  // `code`: a rank that fails cannot leave the others waiting in a
  // collective call.
  [[noreturn]] static void abort_all(const std::string& message, int code = 1);
  // Prints "bulkgnn (rank r of P): message" (for a collective_error, which
  // every rank reports itself before ending normally).
  static void print_on_this_rank(const std::string& message);

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace bulkgnn::distributed
