#pragma once

#include "bulkgnn/core/dense.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::trainer {

// Owning row-major float matrix: activations, gradients and results.
class matrix {
 public:
  matrix() = default;
  // Zero-filled.
  matrix(std::int64_t rows, std::int64_t cols);

  [[nodiscard]] std::int64_t rows() const { return rows_; }
  [[nodiscard]] std::int64_t cols() const { return cols_; }
  [[nodiscard]] dense_view<float> view() { return {rows_, cols_, data_}; }
  [[nodiscard]] dense_view<const float> view() const { return {rows_, cols_, data_}; }
  [[nodiscard]] std::span<float> data() { return data_; }
  [[nodiscard]] std::span<const float> data() const { return data_; }

  // Changes the shape keeping the storage, so a buffer reused across calls
  // allocates only when it grows; the contents are unspecified afterwards.
  void reshape(std::int64_t rows, std::int64_t cols);

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<float> data_;
};

}  // namespace bulkgnn::trainer
