#include "bulkgnn/kernels/rules/cached_rows.hpp"
#include "kernels.hpp"
#include "launch.cuh"

#include <cub/cub.cuh>

#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// One warp per output row, its lanes over the columns: coalesced reads of
// the source row (in device memory or, through UVA, pinned host memory) and
// coalesced writes.
__global__ void gather_dense(dense_view<const float> x, const vertex_t* rows, std::int64_t count,
                             dense_view<float> out, int* bad_row) {
  const std::int64_t warp =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (warp >= count) return;
  const vertex_t row = rows[warp];
  if (row < 0 || row >= x.rows) {
    if (lane == 0) atomicExch(bad_row, 1);
    return;
  }
  const float* source = x.row_data(row);
  float* target = out.row_data(warp);
  for (std::int64_t c = lane; c < x.cols; c += warpSize) target[c] = source[c];
}

// A warp per row i of x: out[rows[i]] = scale · x[i]. Rows are distinct (the
// front door checks host-readable ids), so no two warps write one row.
__global__ void scatter_dense(dense_view<const float> x, const vertex_t* rows, float scale,
                              dense_view<float> out, int* bad_row) {
  const std::int64_t warp =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (warp >= x.rows) return;
  const vertex_t row = rows[warp];
  if (row < 0 || row >= out.rows) {
    if (lane == 0) atomicExch(bad_row, 1);
    return;
  }
  const float* source = x.row_data(warp);
  float* target = out.row_data(row);
  for (std::int64_t c = lane; c < x.cols; c += warpSize) target[c] = __fmul_rn(scale, source[c]);
}

// As gather_dense, each warp's row read from the cache or the whole table
// (cached_row_source); a block counts its cache hits in shared memory and
// adds them to `hits` once.
__global__ void gather_cached(const float* all, std::int64_t all_rows, const float* cache,
                              const std::int32_t* slot_of, std::int64_t cols, const vertex_t* rows,
                              std::int64_t count, float* out, unsigned long long* hits,
                              int* bad_row) {
  __shared__ unsigned long long block_hits;
  if (threadIdx.x == 0) block_hits = 0;
  __syncthreads();
  const std::int64_t warp =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (warp < count) {
    const vertex_t row = rows[warp];
    if (row < 0 || row >= all_rows) {
      if (lane == 0) atomicExch(bad_row, 1);
    } else {
      const float* source = rules::cached_row_source(all, cache, slot_of, cols, row);
      float* target = out + warp * cols;
      for (std::int64_t c = lane; c < cols; c += warpSize) target[c] = source[c];
      if (lane == 0 && slot_of[row] >= 0) atomicAdd(&block_hits, 1ull);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_hits > 0) atomicAdd(hits, block_hits);
}

__global__ void count_row_entries(csr_view a, const vertex_t* rows, std::int64_t count,
                                  edge_t* counts, int* bad_row) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const vertex_t r = rows[i];
  if (r < 0 || r >= a.rows) {
    atomicExch(bad_row, 1);
    counts[i] = 0;
    return;
  }
  counts[i] = a.end_entry(r) - a.first_entry(r);
}

// One warp per gathered row, its lanes over the row's entries.
__global__ void copy_row_entries(csr_view a, const vertex_t* rows, std::int64_t count,
                                 const edge_t* out_indptr, vertex_t* out_indices,
                                 float* out_values) {
  const std::int64_t i =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (i >= count) return;
  const vertex_t r = rows[i];
  const edge_t from = a.first_entry(r);
  const edge_t length = a.end_entry(r) - from;
  const edge_t to = out_indptr[i];
  for (edge_t e = lane; e < length; e += warpSize) {
    out_indices[to + e] = a.column_at(from + e);
    if (a.weighted()) out_values[to + e] = a.value_at(from + e);
  }
}

}  // namespace

csr_matrix gather_rows(const executor& exec, csr_view a, std::span<const vertex_t> rows) {
  const cudaStream_t stream = stream_of(exec);
  const auto count = static_cast<std::int64_t>(rows.size());
  csr_matrix out;
  out.rows = count;
  out.cols = a.cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(count) + 1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, sizeof(edge_t), stream));
  if (count == 0) return out;
  auto bad_row = device_flag(exec);
  count_row_entries<<<blocks_for(count), threads_per_block, 0, stream>>>(
      a, rows.data(), count, out.indptr.data() + 1, bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("gather_rows: rows holds a vertex outside [0, " + std::to_string(a.rows) + ")").c_str());
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, out.indptr.data() + 1,
                                                   out.indptr.data() + 1, count, stream));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch.data(), bytes, out.indptr.data() + 1,
                                                   out.indptr.data() + 1, count, stream));
  const edge_t total = read_back(exec, out.indptr.data() + count);
  out.indices = buffer<vertex_t>(static_cast<std::size_t>(total), exec.memory());
  if (a.weighted()) out.values = buffer<float>(static_cast<std::size_t>(total), exec.memory());
  copy_row_entries<<<blocks_for(count * 32), threads_per_block, 0, stream>>>(
      a, rows.data(), count, out.indptr.data(), out.indices.data(), out.values.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

std::int64_t gather_cached_rows(const executor& exec, const cached_rows& x,
                                std::span<const vertex_t> rows, dense_view<float> out) {
  const auto count = static_cast<std::int64_t>(rows.size());
  if (count == 0) return 0;
  auto bad_row = device_flag(exec);
  buffer<unsigned long long> hits(1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(hits.data(), 0, sizeof(unsigned long long), stream_of(exec)));
  gather_cached<<<blocks_for(count * 32), threads_per_block, 0, stream_of(exec)>>>(
      x.all.data.data(), x.all.rows, x.cache.data.data(), x.slot_of.data(), x.all.cols, rows.data(),
      count, out.data.data(), hits.data(), bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("gather_cached_rows: rows holds a vertex outside [0, " + std::to_string(x.all.rows) + ")")
            .c_str());
  return static_cast<std::int64_t>(read_back(exec, hits.data()));
}

void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out) {
  const auto count = static_cast<std::int64_t>(rows.size());
  if (count == 0 || x.cols == 0) return;
  auto bad_row = device_flag(exec);
  const std::int64_t threads = count * 32;
  gather_dense<<<blocks_for(threads), threads_per_block, 0, stream_of(exec)>>>(
      x, rows.data(), count, out, bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("gather_dense_rows: rows holds a vertex outside [0, " + std::to_string(x.rows) + ")")
            .c_str());
}

void scatter_dense_rows(const executor& exec, dense_view<const float> x,
                        std::span<const vertex_t> rows, float scale, dense_view<float> out) {
  const auto count = static_cast<std::int64_t>(rows.size());
  if (count == 0 || x.cols == 0) return;
  auto bad_row = device_flag(exec);
  scatter_dense<<<blocks_for(count * 32), threads_per_block, 0, stream_of(exec)>>>(
      x, rows.data(), scale, out, bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("scatter_dense_rows: rows holds a vertex outside [0, " + std::to_string(out.rows) + ")")
            .c_str());
}

}  // namespace bulkgnn::kernels::cuda
