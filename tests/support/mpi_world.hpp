#pragma once

#include <mpi.h>

namespace bulkgnn::testing {

// This process's place in MPI_COMM_WORLD (an MPI test's main initialised it).
inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace bulkgnn::testing
