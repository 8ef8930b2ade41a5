#pragma once

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/memory_space.hpp"

#include <cstdint>
#include <span>
#include <type_traits>

namespace bulkgnn {

// Non-owning row-major view of a rows × cols matrix (node features, say),
// trivially copyable, passed by value into kernels; `space` says where the
// elements live (row() reads them only when they are host-accessible).
template <class T>
struct dense_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<T> data;
  memory_space space = memory_space::host;

  [[nodiscard]] std::span<T> row(std::int64_t r) const {
    return data.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
  }
  [[nodiscard]] bool empty() const { return rows == 0 || cols == 0; }
  // Element (r, c) and row r's first element, through data(): CUDA kernels,
  // which take the view by value, call these on device memory too.
  BULKGNN_HOST_DEVICE T& at(std::int64_t r, std::int64_t c) const {
    return data.data()[r * cols + c];
  }
  BULKGNN_HOST_DEVICE T* row_data(std::int64_t r) const { return data.data() + r * cols; }
  // A writable view can be read through wherever a read-only one is taken.
  operator dense_view<const T>() const  // NOLINT(google-explicit-constructor)
      requires(!std::is_const_v<T>) {
    return {rows, cols, data, space};
  }
};

}  // namespace bulkgnn
