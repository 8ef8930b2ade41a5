#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

namespace bulkgnn {

// Non-owning row-major view of a rows × cols matrix (node features, say).
template <class T>
struct dense_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<T> data;

  [[nodiscard]] std::span<T> row(std::int64_t r) const {
    return data.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
  }
  [[nodiscard]] bool empty() const { return rows == 0 || cols == 0; }
  // A writable view can be read through wherever a read-only one is taken.
  operator dense_view<const T>() const  // NOLINT(google-explicit-constructor)
      requires(!std::is_const_v<T>) {
    return {rows, cols, data};
  }
};

}  // namespace bulkgnn
