#include "bulkgnn/trainer/matrix.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>

namespace bulkgnn::trainer {

matrix::matrix(std::int64_t rows, std::int64_t cols, memory_resource& memory) : data_(memory) {
  reshape(rows, cols);
  if (host_accessible(space())) std::fill(data_.begin(), data_.end(), 0.0f);
}

void matrix::reshape(std::int64_t rows, std::int64_t cols) {
  BULKGNN_EXPECTS(rows >= 0 && cols >= 0, "matrix: negative shape {}x{}", rows, cols);
  rows_ = rows;
  cols_ = cols;
  // A fresh buffer rather than resize(): resizing fills new elements, which
  // device memory does not allow, and the contents need not survive.
  if (size() > data_.size())
    data_ = buffer<float>(std::max(size(), data_.size() + data_.size() / 2), data_.resource());
}

}  // namespace bulkgnn::trainer
