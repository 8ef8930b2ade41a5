#include "bulkgnn/kernels/rules/dropout.hpp"
#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

// Entries of the masks drawn by one thread: one Philox block (4 words of 16 +
// 16 bits), so that each thread computes exactly one block of its row's stream.
constexpr std::int64_t entries_per_block = 8;

__global__ void relu_entries(float* x, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = rules::relu(x[i]);
}

// Thread t takes entries 8g .. 8g+7 of row r: block g of the row's Philox
// stream, whose words 4g .. 4g+3 are the words the host's stream hands out
// for those entries (entry j uses half j % 2 of word j / 2).
__global__ void relu_and_drop(float* x, std::int64_t rows, std::int64_t cols,
                              rules::dropout_threshold threshold, rng_key step,
                              const vertex_t* row_ids) {
  const std::int64_t blocks_per_row = (cols + entries_per_block - 1) / entries_per_block;
  const std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (t >= rows * blocks_per_row) return;
  const std::int64_t r = t / blocks_per_row;
  const std::int64_t first = (t % blocks_per_row) * entries_per_block;
  const auto row_id = static_cast<std::uint32_t>(row_ids == nullptr ? r : row_ids[r]);
  philox_stream stream(rules::dropout_row_stream(step, row_id));
  stream.skip_to_word(static_cast<std::uint64_t>(first / 2));
  std::uint32_t words[entries_per_block / 2];
  stream.next_u32s(words, entries_per_block / 2);
  float* row = x + r * cols;
  const std::int64_t end = first + entries_per_block < cols ? first + entries_per_block : cols;
  for (std::int64_t j = first; j < end; ++j) {
    const bool keep = rules::dropout_keeps(words[(j - first) / 2], j, threshold.bits);
    row[j] = rules::relu_dropout(row[j], keep, threshold.scale);
  }
}

__global__ void relu_dropout_backward_entries(const float* y, float scale, float* grad,
                                              std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) grad[i] = rules::relu_dropout_backward(y[i], grad[i], scale);
}

}  // namespace

void relu(const executor& exec, dense_view<float> x) {
  const std::int64_t count = x.rows * x.cols;
  if (count == 0) return;
  relu_entries<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(x.data.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

void relu_dropout(const executor& exec, dense_view<float> x, rules::dropout_threshold threshold,
                  rng_key step, std::span<const vertex_t> row_ids) {
  if (x.rows == 0 || x.cols == 0) return;
  const std::int64_t threads = x.rows * ((x.cols + entries_per_block - 1) / entries_per_block);
  relu_and_drop<<<blocks_for(threads), threads_per_block, 0, stream_of(exec)>>>(
      x.data.data(), x.rows, x.cols, threshold, step, row_ids.empty() ? nullptr : row_ids.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
}

void relu_dropout_backward(const executor& exec, dense_view<const float> y, float scale,
                           dense_view<float> grad) {
  const std::int64_t count = y.rows * y.cols;
  if (count == 0) return;
  relu_dropout_backward_entries<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      y.data.data(), scale, grad.data.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
