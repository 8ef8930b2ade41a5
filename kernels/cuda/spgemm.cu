#include "kernels.hpp"
#include "launch.cuh"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <string>

// spgemm and add as expand, stable sort, sum: every product (or summand) is
// written at the position the host back ends visit it in (A's row, then B's
// row; for add, A's run then B's), keyed by (row, column). A stable radix
// sort groups equal keys and keeps that order inside each group, and one
// thread sums each group from 0.0 in that order with unfused double
// additions. So every value has the bits of the cpu back end, which no
// cuSPARSE SpGEMM promises (its sums follow its own, unspecified order).
// The sort also leaves the groups in (row, column) order: the result's
// layout, columns ascending.
namespace bulkgnn::kernels::cuda {
namespace {

__device__ std::uint64_t key_of(std::int64_t row, vertex_t column) {
  return (static_cast<std::uint64_t>(row) << 32) | static_cast<std::uint32_t>(column);
}

// Products contributed by entry e (0-based) of A: the length of B's row.
__global__ void count_products(csr_view a, csr_view b, edge_t* counts, int* bad_column) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e >= a.nnz()) return;
  const vertex_t inner = a.column_at(e);
  if (inner < 0 || inner >= b.rows) {
    atomicExch(bad_column, 1);
    counts[e] = 0;
    return;
  }
  counts[e] = b.end_entry(inner) - b.first_entry(inner);
}

// One warp per entry of A; its lanes write B's row at fixed positions, so
// the order of the items does not depend on the lanes' timing.
__global__ void expand_products(csr_view a, csr_view b, const edge_t* first_item,
                                std::uint64_t* keys, double* products) {
  const std::int64_t e =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (e >= a.nnz()) return;
  const std::int64_t row =
      last_offset_at_or_below(a.indptr.data(), a.rows + 1, a.indptr.data()[0] + e);
  const double left = a.value_at(e);
  const vertex_t inner = a.column_at(e);
  const edge_t begin = b.first_entry(inner);
  const edge_t length = b.end_entry(inner) - begin;
  const edge_t out = first_item[e];
  for (edge_t f = lane; f < length; f += warpSize) {
    keys[out + f] = key_of(row, b.column_at(begin + f));
    products[out + f] = __dmul_rn(left, b.value_at(begin + f));
  }
}

// Row i of A + B holds A's entries of row i, then B's, at the positions
// (A entries before row i) + (B entries before row i) + k.
__global__ void expand_sum(csr_view a, csr_view b, std::uint64_t* keys, double* summands) {
  const std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const edge_t a_nnz = a.nnz();
  if (t >= a_nnz + b.nnz()) return;
  const bool from_a = t < a_nnz;
  const csr_view& m = from_a ? a : b;
  const edge_t e = from_a ? t : t - a_nnz;  // position in m
  const std::int64_t row =
      last_offset_at_or_below(m.indptr.data(), m.rows + 1, m.indptr.data()[0] + e);
  const edge_t in_row = e - m.first_entry(row);
  const edge_t at =
      from_a ? a.first_entry(row) + b.first_entry(row) + in_row : a.end_entry(row) + e;
  keys[at] = key_of(row, m.column_at(e));
  summands[at] = m.value_at(e);
}

__global__ void mark_heads(const std::uint64_t* keys, std::int64_t count, edge_t* run_ends) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) run_ends[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0;
}

// One thread per group (at its head): the group's sum, from 0.0, in item
// order; run_ids is the inclusive scan of the heads.
__global__ void sum_groups(const std::uint64_t* keys, const double* items, std::int64_t count,
                           const edge_t* run_ids, vertex_t* out_columns, float* out_values,
                           unsigned long long* per_row) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count || (i > 0 && keys[i] == keys[i - 1])) return;
  double sum = 0.0;
  for (std::int64_t j = i; j < count && keys[j] == keys[i]; ++j) sum = __dadd_rn(sum, items[j]);
  const edge_t group = run_ids[i] - 1;
  out_columns[group] = static_cast<vertex_t>(keys[i] & 0xFFFFFFFFu);
  out_values[group] = __double2float_rn(sum);
  atomicAdd(per_row + (keys[i] >> 32), 1ull);
}

__global__ void counts_to_indptr(const unsigned long long* per_row, std::int64_t rows,
                                 edge_t* indptr) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r < rows) indptr[r + 1] = static_cast<edge_t>(per_row[r]);
  if (r == 0) indptr[0] = 0;
}

// Sorts the items stably by key and sums each group into a rows × cols CSR
// matrix in device memory.
csr_matrix sum_by_key(const executor& exec, buffer<std::uint64_t> keys, buffer<double> items,
                      std::int64_t rows, std::int64_t cols) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  const auto count = static_cast<std::int64_t>(keys.size());
  csr_matrix out;
  out.rows = rows;
  out.cols = cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(rows) + 1, device);
  buffer<unsigned long long> per_row(static_cast<std::size_t>(rows), device);
  BULKGNN_CUDA_CHECK(
      cudaMemsetAsync(per_row.data(), 0, per_row.size() * sizeof(unsigned long long), stream));
  if (count == 0) {
    out.indices = buffer<vertex_t>(device);
    out.values = buffer<float>(device);
  } else {
    buffer<std::uint64_t> sorted_keys(keys.size(), device);
    buffer<double> sorted_items(items.size(), device);
    std::size_t bytes = 0;
    const int end_bit = row_key_bits(rows);
    BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, bytes, keys.data(), sorted_keys.data(), items.data(), sorted_items.data(), count,
        0, end_bit, stream));
    buffer<std::byte> sort_scratch(bytes, device);
    BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        sort_scratch.data(), bytes, keys.data(), sorted_keys.data(), items.data(),
        sorted_items.data(), count, 0, end_bit, stream));
    buffer<edge_t> run_ids(keys.size(), device);
    mark_heads<<<blocks_for(count), threads_per_block, 0, stream>>>(sorted_keys.data(), count,
                                                                    run_ids.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
    inclusive_scan(exec, run_ids.data(), count);
    const edge_t groups = read_back(exec, run_ids.data() + count - 1);
    out.indices = buffer<vertex_t>(static_cast<std::size_t>(groups), device);
    out.values = buffer<float>(static_cast<std::size_t>(groups), device);
    sum_groups<<<blocks_for(count), threads_per_block, 0, stream>>>(
        sorted_keys.data(), sorted_items.data(), count, run_ids.data(), out.indices.data(),
        out.values.data(), per_row.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  counts_to_indptr<<<blocks_for(rows), threads_per_block, 0, stream>>>(per_row.data(), rows,
                                                                       out.indptr.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (rows > 0) inclusive_scan(exec, out.indptr.data() + 1, rows);
  return out;
}

__global__ void normalize(edge_t* indptr, std::int64_t rows, float* values) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  float* first = values + (indptr[r] - indptr[0]);
  const edge_t length = indptr[r + 1] - indptr[r];
  double sum = 0.0;
  for (edge_t e = 0; e < length; ++e) sum = __dadd_rn(sum, static_cast<double>(first[e]));
  if (sum == 0.0) return;
  for (edge_t e = 0; e < length; ++e)
    first[e] = __double2float_rn(__ddiv_rn(static_cast<double>(first[e]), sum));
}

}  // namespace

csr_matrix spgemm(const executor& exec, csr_view a, csr_view b) {
  const cudaStream_t stream = stream_of(exec);
  const std::int64_t a_nnz = static_cast<std::int64_t>(a.indices.size());
  buffer<edge_t> first_item(static_cast<std::size_t>(a_nnz) + 1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(first_item.data(), 0, sizeof(edge_t), stream));
  auto bad_column = device_flag(exec);
  if (a_nnz > 0) {
    count_products<<<blocks_for(a_nnz), threads_per_block, 0, stream>>>(a, b, first_item.data() + 1,
                                                                        bad_column.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
    inclusive_scan(exec, first_item.data() + 1, a_nnz);
  }
  if (read_back(exec, bad_column.data()) != 0)
    throw_argument_error(
        ("spgemm: a holds a column outside [0, " + std::to_string(b.rows) + ")").c_str());
  const edge_t products = read_back(exec, first_item.data() + a_nnz);
  buffer<std::uint64_t> keys(static_cast<std::size_t>(products), exec.memory());
  buffer<double> items(static_cast<std::size_t>(products), exec.memory());
  if (products > 0) {
    expand_products<<<blocks_for(a_nnz * 32), threads_per_block, 0, stream>>>(
        a, b, first_item.data(), keys.data(), items.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  return sum_by_key(exec, std::move(keys), std::move(items), a.rows, b.cols);
}

csr_matrix add(const executor& exec, csr_view a, csr_view b) {
  const auto count = static_cast<std::int64_t>(a.indices.size() + b.indices.size());
  buffer<std::uint64_t> keys(static_cast<std::size_t>(count), exec.memory());
  buffer<double> items(static_cast<std::size_t>(count), exec.memory());
  if (count > 0) {
    expand_sum<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(a, b, keys.data(),
                                                                             items.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  return sum_by_key(exec, std::move(keys), std::move(items), a.rows, a.cols);
}

void normalize_rows(const executor& exec, csr_matrix& m) {
  if (m.rows == 0) return;
  normalize<<<blocks_for(m.rows), threads_per_block, 0, stream_of(exec)>>>(m.indptr.data(), m.rows,
                                                                           m.values.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
