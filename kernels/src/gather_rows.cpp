#include "bulkgnn/kernels/gather_rows.hpp"

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

csr_matrix gather_rows(const executor& exec, csr_view a, std::span<const vertex_t> rows) {
  // `a` is usually the whole graph and only the gathered rows are read, so its
  // column indices are trusted rather than scanned.
  detail::check_csr_sizes(exec, a, "gather_rows", "a");
  if (detail::span_reachable(exec, rows.data(), "gather_rows", "rows"))
    detail::check_vertices_below(rows, a.rows, "gather_rows", "rows");
  return detail::dispatch(
      exec, "gather_rows", [&] { return reference::gather_rows(a, rows); },
      [&] { return cpu::gather_rows(a, rows); }, [&] { return cuda::gather_rows(exec, a, rows); });
}

}  // namespace bulkgnn::kernels
