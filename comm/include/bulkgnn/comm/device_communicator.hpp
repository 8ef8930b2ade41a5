#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace bulkgnn::comm {

// The two collectives of ranks that each own a GPU, on float arrays in the
// memory of the executor given at creation, queued on its stream: gradients
// summed, and feature rows moved between the GPUs. The communicator's ranks
// set it up (for NCCL, one unique id broadcast from rank 0) and keep carrying
// everything else (ids, counts, metrics). Traffic is counted in that
// communicator's log under its stage, by its rules (communicator.hpp).
class device_communicator {
 public:
  virtual ~device_communicator() = default;
  // `values` the same length on every rank; summed in place (collective).
  virtual void all_reduce_sum(std::span<float> values) = 0;
  // send holds the parts for ranks 0..P-1 back to back (send_counts floats
  // each); receive gets the parts from each rank back to back
  // (receive_counts floats each, which the caller must know; collective).
  virtual void all_to_all(std::span<const float> send, std::span<const std::int64_t> send_counts,
                          std::span<float> receive,
                          std::span<const std::int64_t> receive_counts) = 0;
  [[nodiscard]] virtual const char* name() const = 0;
};

// Whether this build has NCCL (BULKGNN_ENABLE_NCCL found it).
[[nodiscard]] bool nccl_compiled();

// An NCCL communicator over the ranks of `ranks`, each on the GPU of its
// cuda `exec` (collective over `ranks`). NCCL refuses two ranks on one GPU:
// callers check every_rank_owns_a_gpu first. Throws bulkgnn::error naming the
// NCCL call that failed, or saying that the build has no NCCL.
[[nodiscard]] std::unique_ptr<device_communicator> make_nccl_communicator(communicator& ranks,
                                                                          const executor& exec);

// The same calls over `ranks` itself, in host memory: what code written for
// an NCCL communicator runs on where there is none, and so its CPU oracle.
[[nodiscard]] std::unique_ptr<device_communicator> make_host_communicator(communicator& ranks);

// Whether every rank trains on a GPU of its own: a cuda executor, and no
// two ranks on the same host share a device (collective).
[[nodiscard]] bool every_rank_owns_a_gpu(communicator& ranks, const executor& exec);

}  // namespace bulkgnn::comm
