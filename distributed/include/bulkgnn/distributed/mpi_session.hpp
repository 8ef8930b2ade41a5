#pragma once

#include <string>

namespace bulkgnn::distributed {

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

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace bulkgnn::distributed
