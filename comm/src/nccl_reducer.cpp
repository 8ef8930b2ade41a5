// Compiled only where BULKGNN_ENABLE_NCCL found NCCL (with the CUDA back end).
#include "bulkgnn/comm/device_reducer.hpp"
#include "bulkgnn/core/error.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <fmt/format.h>

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

class nccl_reducer final : public device_reducer {
 public:
  nccl_reducer(communicator& ranks, const executor& exec) : exec_(exec) {
    ncclUniqueId id{};
    if (ranks.rank() == 0) BULKGNN_NCCL_CHECK(ncclGetUniqueId(&id));
    ranks.broadcast(std::span<ncclUniqueId>(&id, 1), 0);
    const on_device scope(exec_.device()->device());
    BULKGNN_NCCL_CHECK(ncclCommInitRank(&comm_, ranks.size(), id, ranks.rank()));
  }
  ~nccl_reducer() override { (void)ncclCommDestroy(comm_); }
  nccl_reducer(const nccl_reducer&) = delete;
  nccl_reducer& operator=(const nccl_reducer&) = delete;

  void all_reduce_sum(std::span<float> values) override {
    if (values.empty()) return;
    const on_device scope(exec_.device()->device());
    BULKGNN_NCCL_CHECK(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat,
                                     ncclSum, comm_,
                                     static_cast<cudaStream_t>(exec_.device()->stream())));
  }
  [[nodiscard]] const char* name() const override { return "NCCL"; }

 private:
  executor exec_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool nccl_compiled() { return true; }

std::unique_ptr<device_reducer> make_nccl_reducer(communicator& ranks, const executor& exec) {
  BULKGNN_EXPECTS(exec.device() != nullptr, "make_nccl_reducer: a {} executor has no GPU to sum on",
                  backend_name(exec.kind()));
  return std::make_unique<nccl_reducer>(ranks, exec);
}

}  // namespace bulkgnn::comm
