#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/memory_space.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::trainer {

// Owning row-major float matrix (activations, gradients, results) in one
// memory space: the model's executor's memory, so the same model code trains
// on the host and on a GPU.
class matrix {
 public:
  matrix() = default;
  // Zero-filled where the host can write it; unspecified in device memory
  // (every user overwrites it there).
  matrix(std::int64_t rows, std::int64_t cols, memory_resource& memory = host_memory());

  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  [[nodiscard]] memory_space space() const { return data_.space(); }
  [[nodiscard]] dense_view<float> view() { return {rows_, cols_, data(), space()}; }
  [[nodiscard]] dense_view<const float> view() const { return {rows_, cols_, data(), space()}; }
  [[nodiscard]] std::span<float> data() { return {data_.data(), size()}; }
  [[nodiscard]] std::span<const float> data() const { return {data_.data(), size()}; }

  // Changes the shape keeping the storage, so a buffer reused across calls
  // allocates only when it grows; the contents are unspecified afterwards.
  void reshape(std::int64_t rows, std::int64_t cols);

 private:
  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(rows_ * cols_); }

  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  buffer<float> data_;  // at least rows × cols elements
};

}  // namespace bulkgnn::trainer
