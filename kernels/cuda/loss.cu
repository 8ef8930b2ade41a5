#include "bulkgnn/kernels/rules/logistic.hpp"
#include "bulkgnn/kernels/rules/softmax.hpp"
#include "kernels.hpp"
#include "launch.cuh"

#include <sstream>
#include <string>
#include <vector>

namespace bulkgnn::kernels::cuda {
namespace {

constexpr unsigned long long no_bad_row = ~0ull;

// Row r's loss and whether its argmax is the label, one thread per row, by
// the host's rules. A label outside [0, cols) records (row << 32 | label) of
// the first such row (rows < 2^32).
__global__ void softmax_rows(const float* logits, std::int64_t rows, std::int64_t cols,
                             const std::int32_t* labels, float scale, float* grad, double* row_loss,
                             std::uint8_t* row_correct, unsigned long long* first_bad_row) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const std::int32_t label = labels[r];
  if (label < 0 || label >= cols) {
    atomicMin(first_bad_row,
              (static_cast<unsigned long long>(r) << 32) | static_cast<std::uint32_t>(label));
    return;
  }
  const float* row = logits + r * cols;
  if (row_loss != nullptr)
    row_loss[r] = rules::softmax_cross_entropy_row(row, cols, label, scale,
                                                   grad == nullptr ? nullptr : grad + r * cols);
  row_correct[r] = rules::argmax(row, cols) == label ? 1 : 0;
}

template <class T>
std::vector<T> to_host(const executor& exec, const buffer<T>& values) {
  std::vector<T> host(values.size());
  BULKGNN_CUDA_CHECK(cudaMemcpyAsync(host.data(), values.data(), values.size() * sizeof(T),
                                     cudaMemcpyDeviceToHost, stream_of(exec)));
  BULKGNN_CUDA_CHECK(cudaStreamSynchronize(stream_of(exec)));
  return host;
}

// Runs softmax_rows; row_loss is null when only the argmax is wanted.
// Throws, naming the row and its label, when a label is out of range.
std::vector<std::uint8_t> run_rows(const executor& exec, const char* function,
                                   dense_view<const float> logits,
                                   std::span<const std::int32_t> labels, float scale, float* grad,
                                   double* row_loss) {
  if (logits.rows > 0xFFFFFFFFll)
    throw_argument_error((std::string(function) + ": more than 2^32 rows of logits").c_str());
  buffer<std::uint8_t> row_correct(static_cast<std::size_t>(logits.rows), exec.memory());
  buffer<unsigned long long> first_bad_row(1, exec.memory());
  BULKGNN_CUDA_CHECK(
      cudaMemsetAsync(first_bad_row.data(), 0xFF, sizeof(unsigned long long), stream_of(exec)));
  softmax_rows<<<blocks_for(logits.rows), threads_per_block, 0, stream_of(exec)>>>(
      logits.data.data(), logits.rows, logits.cols, labels.data(), scale, grad, row_loss,
      row_correct.data(), first_bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  const auto bad = read_back(exec, first_bad_row.data());
  if (bad != no_bad_row) {
    const auto label = static_cast<std::int32_t>(static_cast<std::uint32_t>(bad));
    throw_argument_error((std::string(function) + ": row " + std::to_string(bad >> 32) +
                          " has label " + std::to_string(label) + ", outside [0, " +
                          std::to_string(logits.cols) + ")")
                             .c_str());
  }
  return to_host(exec, row_correct);
}

// Pair i's logistic loss and whether its score is on its label's side, one
// thread per pair, by the host's rule; a label outside [0, 1] records the
// first such pair.
__global__ void logistic_pairs(const float* scores, const float* labels, std::int64_t count,
                               float scale, float* grad, double* pair_loss,
                               std::uint8_t* pair_correct, unsigned long long* first_bad) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if (!(labels[i] >= 0.0f && labels[i] <= 1.0f)) {
    atomicMin(first_bad, static_cast<unsigned long long>(i));
    return;
  }
  pair_loss[i] =
      rules::logistic_loss(scores[i], labels[i], scale, grad == nullptr ? nullptr : grad + i);
  pair_correct[i] = (scores[i] > 0) == (labels[i] > 0.5f) ? 1 : 0;
}

std::int64_t sum_correct(const std::vector<std::uint8_t>& row_correct) {
  std::int64_t correct = 0;
  for (const auto c : row_correct) correct += c;
  return correct;
}

}  // namespace

loss_result softmax_cross_entropy(const executor& exec, dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad) {
  loss_result result;
  result.count = logits.rows;
  if (logits.rows == 0) return result;
  buffer<double> row_loss(static_cast<std::size_t>(logits.rows), exec.memory());
  const auto row_correct = run_rows(
      exec, "softmax_cross_entropy", logits, labels, 1.0f / static_cast<float>(logits.rows),
      grad.data.empty() ? nullptr : grad.data.data(), row_loss.data());
  // The row losses are added on the host in row order, as the host back ends add them.
  double total = 0.0;
  for (const double loss : to_host(exec, row_loss)) total += loss;
  result.loss = total / static_cast<double>(logits.rows);
  result.correct = sum_correct(row_correct);
  return result;
}

std::int64_t count_correct(const executor& exec, dense_view<const float> logits,
                           std::span<const std::int32_t> labels) {
  if (logits.rows == 0) return 0;
  return sum_correct(run_rows(exec, "count_correct", logits, labels, 0.0f, nullptr, nullptr));
}

loss_result binary_cross_entropy(const executor& exec, std::span<const float> scores,
                                 std::span<const float> labels, std::span<float> grad) {
  loss_result result;
  result.count = static_cast<std::int64_t>(scores.size());
  if (scores.empty()) return result;
  buffer<double> pair_loss(scores.size(), exec.memory());
  buffer<std::uint8_t> pair_correct(scores.size(), exec.memory());
  buffer<unsigned long long> first_bad(1, exec.memory());
  BULKGNN_CUDA_CHECK(
      cudaMemsetAsync(first_bad.data(), 0xFF, sizeof(unsigned long long), stream_of(exec)));
  logistic_pairs<<<blocks_for(result.count), threads_per_block, 0, stream_of(exec)>>>(
      scores.data(), labels.data(), result.count, 1.0f / static_cast<float>(scores.size()),
      grad.empty() ? nullptr : grad.data(), pair_loss.data(), pair_correct.data(),
      first_bad.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  const auto bad = read_back(exec, first_bad.data());
  if (bad != no_bad_row) {
    // The shortest form, as the host back ends print it (2, not 2.000000).
    std::ostringstream message;
    message << "binary_cross_entropy: label " << read_back(exec, labels.data() + bad)
            << " at index " << bad << " is outside [0, 1]";
    throw_argument_error(message.str().c_str());
  }
  // The pair losses are added on the host in pair order, as the host back ends add them.
  double total = 0.0;
  for (const double loss : to_host(exec, pair_loss)) total += loss;
  result.loss = total / static_cast<double>(scores.size());
  result.correct = sum_correct(to_host(exec, pair_correct));
  return result;
}

}  // namespace bulkgnn::kernels::cuda
