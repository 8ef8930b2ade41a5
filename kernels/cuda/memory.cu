#include "check.cuh"
#include "kernels.hpp"

namespace bulkgnn::kernels::cuda {

memory_space space_of(const void* pointer) {
  cudaPointerAttributes attributes{};
  BULKGNN_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      return memory_space::device;
    case cudaMemoryTypeHost:
      return memory_space::pinned_host;
    default:
      return memory_space::host;
  }
}

}  // namespace bulkgnn::kernels::cuda
