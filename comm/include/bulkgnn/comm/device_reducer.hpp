#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/executor.hpp"

#include <memory>
#include <span>

namespace bulkgnn::comm {

// Sums float arrays that live in a GPU's memory over ranks, in place, queued
// on the executor's stream: the gradients of data-parallel ranks that each
// own a GPU. The communicator's ranks set it up (one NCCL unique id
// broadcast from rank 0) and, with MPI, keep carrying everything else.
class device_reducer {
 public:
  virtual ~device_reducer() = default;
  // `values` in the device memory of the executor given at creation, the
  // same length on every rank; collective over the ranks.
  virtual void all_reduce_sum(std::span<float> values) = 0;
  [[nodiscard]] virtual const char* name() const = 0;
};

// Whether this build sums over NCCL (BULKGNN_ENABLE_NCCL found it).
[[nodiscard]] bool nccl_compiled();

// An NCCL communicator over the ranks of `ranks`, each on the GPU of its
// cuda `exec` (collective over `ranks`). NCCL refuses two ranks on one GPU:
// callers check every_rank_owns_a_gpu first. Throws bulkgnn::error naming the
// NCCL call that failed, or saying that the build has no NCCL.
[[nodiscard]] std::unique_ptr<device_reducer> make_nccl_reducer(communicator& ranks,
                                                                const executor& exec);

// Whether every rank trains on a GPU of its own: a cuda executor, and no
// two ranks on the same host share a device (collective).
[[nodiscard]] bool every_rank_owns_a_gpu(communicator& ranks, const executor& exec);

}  // namespace bulkgnn::comm
