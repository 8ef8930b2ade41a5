// The build without NCCL: GPU ranks sum their gradients and move feature
// rows over the communicator, through host memory.
#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/core/error.hpp"

namespace bulkgnn::comm {

bool nccl_compiled() { return false; }

std::unique_ptr<device_communicator> make_nccl_communicator(communicator&, const executor&) {
  throw error(
      "make_nccl_communicator: this build has no NCCL (configure with the CUDA back end where "
      "nccl.h "
      "and libnccl are found, or point NCCL_ROOT at them)");
}

}  // namespace bulkgnn::comm
