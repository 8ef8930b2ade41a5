#include "bulkgnn/trainer/matrix.hpp"

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::trainer {

matrix::matrix(std::int64_t rows, std::int64_t cols) {
  reshape(rows, cols);
  std::fill(data_.begin(), data_.end(), 0.0f);
}

void matrix::reshape(std::int64_t rows, std::int64_t cols) {
  BULKGNN_EXPECTS(rows >= 0 && cols >= 0, "matrix: negative shape {}x{}", rows, cols);
  rows_ = rows;
  cols_ = cols;
  data_.resize(static_cast<std::size_t>(rows * cols));
}

}  // namespace bulkgnn::trainer
