#include "bulkgnn/kernels/rules/dot.hpp"
#include "kernels.hpp"
#include "launch.cuh"

#include <cub/cub.cuh>

#include <bit>
#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// One warp per row of A, its lanes over the columns of X: each output element
// sums its row's products in stored order from 0, multiply and add rounded
// apart (never fused), as the host back ends sum; reads of X's rows are
// coalesced across the lanes.
__global__ void multiply(csr_view a, dense_view<const float> x, dense_view<float> y,
                         int* bad_column) {
  const std::int64_t r =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (r >= a.rows) return;
  for (std::int64_t j = lane; j < x.cols; j += warpSize) {
    float sum = 0.0f;
    for (edge_t e = a.first_entry(r); e < a.end_entry(r); ++e) {
      const vertex_t c = a.column_at(e);
      if (c < 0 || c >= x.rows) {
        atomicExch(bad_column, 1);
        break;
      }
      sum = __fadd_rn(sum, __fmul_rn(a.value_at(e), x.at(c, j)));
    }
    y.at(r, j) = sum;
  }
}

// One warp per row of the pattern, its lanes over the row's entries: each
// entry's dot product runs over k in order (rules::dot_in_order), as on the
// host.
__global__ void sampled_dots(csr_view pattern, dense_view<const float> a, dense_view<const float> b,
                             float* out, int* bad_column) {
  const std::int64_t r =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (r >= pattern.rows) return;
  for (edge_t e = pattern.first_entry(r) + lane; e < pattern.end_entry(r); e += warpSize) {
    const vertex_t c = pattern.column_at(e);
    if (c < 0 || c >= b.rows) {
      atomicExch(bad_column, 1);
      continue;
    }
    out[e] = rules::dot_in_order(a.row_data(r), b.row_data(c), a.cols);
  }
}

// Entry e's row: the last r with first_entry(r) <= e (rows may be empty).
__global__ void row_of_entries(csr_view a, edge_t entries, vertex_t* row_of) {
  const edge_t e = blockIdx.x * static_cast<edge_t>(blockDim.x) + threadIdx.x;
  if (e >= entries) return;
  std::int64_t low = 0;
  std::int64_t high = a.rows;  // first_entry(high) > e
  while (high - low > 1) {
    const std::int64_t mid = low + (high - low) / 2;
    if (a.first_entry(mid) <= e)
      low = mid;
    else
      high = mid;
  }
  row_of[e] = static_cast<vertex_t>(low);
}

__global__ void count_columns(csr_view a, edge_t entries, edge_t* counts, edge_t* entry_ids,
                              int* bad_column) {
  const edge_t e = blockIdx.x * static_cast<edge_t>(blockDim.x) + threadIdx.x;
  if (e >= entries) return;
  entry_ids[e] = e;
  const vertex_t c = a.column_at(e);
  if (c < 0 || c >= a.cols) {
    atomicExch(bad_column, 1);
    return;
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(counts + c + 1), 1ull);
}

__global__ void gather_transposed(const edge_t* order, edge_t entries, const vertex_t* row_of,
                                  const float* values, vertex_t* out_indices, float* out_values) {
  const edge_t i = blockIdx.x * static_cast<edge_t>(blockDim.x) + threadIdx.x;
  if (i >= entries) return;
  out_indices[i] = row_of[order[i]];
  if (values != nullptr) out_values[i] = values[order[i]];
}

}  // namespace

void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y) {
  if (a.rows == 0 || x.cols == 0) return;
  auto bad_column = device_flag(exec);
  multiply<<<blocks_for(a.rows * 32), threads_per_block, 0, stream_of(exec)>>>(a, x, y,
                                                                               bad_column.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_column.data()) != 0)
    throw_argument_error(
        ("spmm: a holds a column outside [0, " + std::to_string(x.rows) + ")").c_str());
}

void sddmm(const executor& exec, csr_view pattern, dense_view<const float> a,
           dense_view<const float> b, std::span<float> out) {
  if (pattern.rows == 0 || out.empty()) return;
  auto bad_column = device_flag(exec);
  sampled_dots<<<blocks_for(pattern.rows * 32), threads_per_block, 0, stream_of(exec)>>>(
      pattern, a, b, out.data(), bad_column.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_column.data()) != 0)
    throw_argument_error(
        ("sddmm: pattern holds a column outside [0, " + std::to_string(b.rows) + ")").c_str());
}

// A stable radix sort of the entries by column keeps, within each column,
// the order of a's entries: rows increasing, repeats in stored order, as the
// host back ends list them.
csr_matrix transpose(const executor& exec, csr_view a) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  csr_matrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.indptr = buffer<edge_t>(static_cast<std::size_t>(a.cols) + 1, device);
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(
      t.indptr.data(), 0, (static_cast<std::size_t>(a.cols) + 1) * sizeof(edge_t), stream));
  const edge_t entries =
      read_back(exec, a.indptr.data() + a.rows) - read_back(exec, a.indptr.data());
  t.indices = buffer<vertex_t>(static_cast<std::size_t>(entries), device);
  if (a.weighted()) t.values = buffer<float>(static_cast<std::size_t>(entries), device);
  if (entries == 0) return t;

  buffer<vertex_t> row_of(static_cast<std::size_t>(entries), device);
  row_of_entries<<<blocks_for(entries), threads_per_block, 0, stream>>>(a, entries, row_of.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  buffer<edge_t> entry_ids(static_cast<std::size_t>(entries), device);
  auto bad_column = device_flag(exec);
  count_columns<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      a, entries, t.indptr.data(), entry_ids.data(), bad_column.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_column.data()) != 0)
    throw_argument_error(
        ("transpose: a holds a column outside [0, " + std::to_string(a.cols) + ")").c_str());

  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, t.indptr.data(), t.indptr.data(),
                                                   a.cols + 1, stream));
  buffer<std::byte> scan_scratch(bytes, device);
  BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_scratch.data(), bytes, t.indptr.data(),
                                                   t.indptr.data(), a.cols + 1, stream));

  // Column indices are in [0, cols), so their low bits order them.
  const int key_bits =
      std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(a.cols))));
  buffer<vertex_t> sorted_columns(static_cast<std::size_t>(entries), device);
  buffer<edge_t> order(static_cast<std::size_t>(entries), device);
  bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, a.indices.data(),
                                                     sorted_columns.data(), entry_ids.data(),
                                                     order.data(), entries, 0, key_bits, stream));
  buffer<std::byte> sort_scratch(bytes, device);
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_scratch.data(), bytes, a.indices.data(),
                                                     sorted_columns.data(), entry_ids.data(),
                                                     order.data(), entries, 0, key_bits, stream));
  gather_transposed<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      order.data(), entries, row_of.data(), a.weighted() ? a.values.data() : nullptr,
      t.indices.data(), a.weighted() ? t.values.data() : nullptr);
  BULKGNN_CUDA_CHECK_LAUNCH();
  return t;
}

}  // namespace bulkgnn::kernels::cuda
