// Compiled only where BULKGNN_ENABLE_NCCL found NCCL (with the CUDA back end).
#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

#include <string>

namespace bulkgnn::comm {
namespace {

void check(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    throw error(fmt::format("{} failed: {}", call, ncclGetErrorString(result)));
}

void check(cudaError_t result, const char* call) {
  if (result != cudaSuccess)
    throw error(fmt::format("{} failed: {}", call, cudaGetErrorString(result)));
}

#define BULKGNN_NCCL_CHECK(call) check((call), #call)

// The executor's GPU is current for the scope (NCCL calls act on it).
class on_device {
 public:
  explicit on_device(int device) {
    BULKGNN_NCCL_CHECK(cudaGetDevice(&previous_));
    BULKGNN_NCCL_CHECK(cudaSetDevice(device));
  }
  ~on_device() { (void)cudaSetDevice(previous_); }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;

 private:
  int previous_ = 0;
};

// Traffic is counted when a call is queued (its seconds are the queueing's:
// the transfer itself runs later on the stream).
class nccl_communicator final : public device_communicator {
 public:
  nccl_communicator(communicator& ranks, const executor& exec)
      : exec_(exec),
        log_(ranks.log()),
        stage_(ranks.stage()),
        rank_(ranks.rank()),
        size_(ranks.size()) {
    ncclUniqueId id{};
    if (ranks.rank() == 0) BULKGNN_NCCL_CHECK(ncclGetUniqueId(&id));
    ranks.broadcast(std::span<ncclUniqueId>(&id, 1), 0);
    const on_device scope(exec_.device()->device());
    BULKGNN_NCCL_CHECK(ncclCommInitRank(&comm_, ranks.size(), id, ranks.rank()));
  }
  ~nccl_communicator() override { (void)ncclCommDestroy(comm_); }
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;

  void all_reduce_sum(std::span<float> values) override {
    if (values.empty()) return;
    const stopwatch watch;
    const on_device scope(exec_.device()->device());
    BULKGNN_NCCL_CHECK(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat,
                                     ncclSum, comm_, stream()));
    const auto bytes = static_cast<std::int64_t>(2 * (size_ - 1) * values.size_bytes() /
                                                 static_cast<std::size_t>(size_));
    log_.add(
        stage_,
        {.bytes_sent = bytes, .bytes_received = bytes, .calls = 1, .seconds = watch.seconds()});
  }

  void all_to_all(std::span<const float> send, std::span<const std::int64_t> send_counts,
                  std::span<float> receive, std::span<const std::int64_t> receive_counts) override {
    const auto bytes = all_to_all_bytes(
        {send.size(), send_counts, receive.size(), receive_counts, rank_, size_, sizeof(float)});
    const stopwatch watch;
    const on_device scope(exec_.device()->device());
    std::size_t sent = 0;
    std::size_t received = 0;
    // Grouped, so that every pair's send and receive progress together
    // (NCCL's all-to-all pattern; a rank's part for itself goes the same way).
    BULKGNN_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size_; ++r) {
      const auto out = static_cast<std::size_t>(send_counts[r]);
      const auto in = static_cast<std::size_t>(receive_counts[r]);
      if (out > 0)
        BULKGNN_NCCL_CHECK(ncclSend(send.data() + sent, out, ncclFloat, r, comm_, stream()));
      if (in > 0)
        BULKGNN_NCCL_CHECK(ncclRecv(receive.data() + received, in, ncclFloat, r, comm_, stream()));
      sent += out;
      received += in;
    }
    BULKGNN_NCCL_CHECK(ncclGroupEnd());
    log_.add(stage_, {.bytes_sent = bytes.sent,
                      .bytes_received = bytes.received,
                      .calls = 1,
                      .seconds = watch.seconds()});
  }

  [[nodiscard]] const char* name() const override { return "NCCL"; }

 private:
  [[nodiscard]] cudaStream_t stream() const {
    return static_cast<cudaStream_t>(exec_.device()->stream());
  }

  executor exec_;
  traffic_log& log_;
  std::string stage_;
  int rank_;
  int size_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool nccl_compiled() { return true; }

std::unique_ptr<device_communicator> make_nccl_communicator(communicator& ranks,
                                                            const executor& exec) {
  BULKGNN_EXPECTS(exec.device() != nullptr,
                  "make_nccl_communicator: a {} executor has no GPU to communicate from",
                  backend_name(exec.kind()));
  return std::make_unique<nccl_communicator>(ranks, exec);
}

}  // namespace bulkgnn::comm
