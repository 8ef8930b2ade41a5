#pragma once

#include "../src/operations.hpp"

// The CUDA back end's kernels, as the front doors call them (host code sees
// no CUDA type here). Each gives output bit-identical to the reference back
// end; the per-element decisions are the __host__ __device__ rules in
// kernels/include/bulkgnn/kernels/rules/, which the host tests check. Array
// arguments are in memory the executor reaches (device or pinned host); the
// front doors checked what the host can read, and the kernels check what it
// cannot (vertex ids in range) and report through throw_argument_error. In a
// build without CUDA, cuda_not_compiled.cpp defines each to throw.
namespace bulkgnn::kernels::cuda {

// Makes the executor's GPU the calling thread's current one for the scope,
// so that its kernels launch into its stream from any thread (pipeline
// stages and ranks start on GPU 0). The front doors hold one around every
// cuda kernel.
class current_device {
 public:
  explicit current_device(const executor& exec);
  ~current_device();
  current_device(const current_device&) = delete;
  current_device& operator=(const current_device&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

BULKGNN_KERNELS_OF_EVERY_BACKEND(BULKGNN_DECLARE_DEVICE_KERNEL)

// relabel.hpp's relabelling, by the method asked for (the host back ends
// have one).
[[nodiscard]] relabelled_blocks relabel_by_segment(const executor& exec,
                                                   const segmented_vertices& destinations,
                                                   csr_view sampled, relabel_method method);

// gemm_mode::fast: cuBLAS's SGEMM on the executor's stream, TF32 off.
void gemm_cublas(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha,
                 dense_view<const float> a, dense_view<const float> b, float beta,
                 dense_view<float> c);

// gemm_mode::fast: cuBLAS's SGEMV of mᵀ and a vector of ones.
void column_sums_cublas(const executor& exec, dense_view<const float> m, std::span<float> sums);

// Where `pointer` lives as the CUDA runtime sees it: device, pinned host
// (page-locked, reachable through UVA) or host (pageable, unreachable from a
// kernel).
[[nodiscard]] memory_space space_of(const void* pointer);

}  // namespace bulkgnn::kernels::cuda
