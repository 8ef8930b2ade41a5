#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/memory_space.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace bulkgnn {

// Non-owning view of a CSR matrix, passed by value into kernels. Row r holds
// the column indices indices[indptr[r] .. indptr[r+1]). An empty `values`
// means every stored entry is 1 (a pattern matrix). `space` says where the
// three arrays live; the accessors below read them, so they are for
// host-accessible views only (the kernel front doors check the space).
struct csr_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::span<const edge_t> indptr;
  std::span<const vertex_t> indices;
  std::span<const float> values;
  memory_space space = memory_space::host;

  [[nodiscard]] BULKGNN_HOST_DEVICE edge_t nnz() const {
    return indptr.empty() ? 0 : indptr.data()[indptr.size() - 1] - indptr.data()[0];
  }
  [[nodiscard]] edge_t row_begin(std::int64_t r) const { return indptr[r]; }
  [[nodiscard]] edge_t row_end(std::int64_t r) const { return indptr[r + 1]; }
  [[nodiscard]] edge_t degree(std::int64_t r) const { return indptr[r + 1] - indptr[r]; }
  [[nodiscard]] BULKGNN_HOST_DEVICE bool weighted() const { return !values.empty(); }
  [[nodiscard]] std::span<const vertex_t> row(std::int64_t r) const {
    return indices.subspan(indptr[r] - indptr.front(), degree(r));
  }
  [[nodiscard]] std::span<const float> row_values(std::int64_t r) const {
    return values.subspan(indptr[r] - indptr.front(), degree(r));
  }

  // Row r's entries are positions [first_entry(r), end_entry(r)) of indices
  // and values (a slice's indptr need not start at 0). These read through
  // data() rather than the spans' checked operator[], so CUDA kernels, which
  // take the view by value, call them on device memory too.
  BULKGNN_HOST_DEVICE edge_t first_entry(std::int64_t r) const {
    return indptr.data()[r] - indptr.data()[0];
  }
  BULKGNN_HOST_DEVICE edge_t end_entry(std::int64_t r) const {
    return indptr.data()[r + 1] - indptr.data()[0];
  }
  BULKGNN_HOST_DEVICE vertex_t column_at(edge_t position) const { return indices.data()[position]; }
  // A pattern's entries are 1.
  BULKGNN_HOST_DEVICE float value_at(edge_t position) const {
    return weighted() ? values.data()[position] : 1.0f;
  }
};

// Owning CSR matrix; its three buffers live in one memory space (host unless
// they were given another resource). indptr always has rows + 1 entries.
struct csr_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  buffer<edge_t> indptr{0};
  buffer<vertex_t> indices;
  buffer<float> values;

  // The last offset: host-accessible matrices only.
  [[nodiscard]] edge_t nnz() const { return indptr.back(); }
  [[nodiscard]] memory_space space() const { return indptr.space(); }
  [[nodiscard]] std::size_t size_bytes() const {
    return indptr.size_bytes() + indices.size_bytes() + values.size_bytes();
  }
  [[nodiscard]] csr_view view() const {
    return {rows, cols, indptr, indices, values, indptr.space()};
  }
};

// A copy of host-readable `m` whose buffers live in `target`'s memory.
[[nodiscard]] inline csr_matrix copy_to(csr_view m, memory_resource& target) {
  csr_matrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.indptr = copy_to(m.indptr, target);
  out.indices = copy_to(m.indices, target);
  out.values = copy_to(m.values, target);
  return out;
}

// A host copy of `m`, from any memory space.
[[nodiscard]] inline csr_matrix copy_to_host(const csr_matrix& m) {
  csr_matrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.indptr = copy_to_host(m.indptr);
  out.indices = copy_to_host(m.indices);
  out.values = copy_to_host(m.values);
  return out;
}

// Describes the first way in which `m` is not a well-formed CSR matrix
// (indptr of length rows + 1 and non-decreasing, spanning exactly the indices,
// every column index in [0, cols), values empty or one per entry); empty if it
// is one. indptr may start above 0, as in a view of some rows of a larger
// matrix. The view must be host-accessible (an internal_error otherwise).
[[nodiscard]] std::string find_csr_problem(csr_view m);

}  // namespace bulkgnn
