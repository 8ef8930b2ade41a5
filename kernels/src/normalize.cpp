#include "bulkgnn/kernels/normalize.hpp"

#include "../cpu/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

float minimum(const executor& exec, std::span<const float> x) {
  (void)detail::span_reachable(exec, x.data(), "minimum", "x");
  return detail::dispatch(
      exec, "minimum", [&] { return reference::minimum(x); }, [&] { return cpu::minimum(x); });
}

void shifted_row_sums(const executor& exec, dense_view<const float> x, float shift,
                      std::span<double> sums) {
  detail::check_dense(exec, x, "shifted_row_sums", "x");
  (void)detail::span_reachable(exec, sums.data(), "shifted_row_sums", "sums");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(sums.size()) == x.rows,
                  "shifted_row_sums: sums has {} entries for {} rows", sums.size(), x.rows);
  detail::dispatch(
      exec, "shifted_row_sums", [&] { reference::shifted_row_sums(x, shift, sums); },
      [&] { cpu::shifted_row_sums(x, shift, sums); });
}

namespace {

// Every divisor that rows [0, count) read is positive: only those of the
// rows at hand, as a gathered block is small and the table of divisors has
// one per vertex of the graph.
void check_divisors(std::span<const float> divisors, const vertex_t* ids, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    const auto v = static_cast<std::size_t>(ids != nullptr ? ids[i] : i);
    BULKGNN_EXPECTS(divisors[v] > 0, "shift_and_divide_rows: divisors[{}] = {} is not positive", v,
                    divisors[v]);
  }
}

}  // namespace

void shift_and_divide_rows(const executor& exec, dense_view<float> rows, float shift,
                           std::span<const float> divisors, std::span<const vertex_t> ids) {
  constexpr std::string_view function = "shift_and_divide_rows";
  detail::check_dense(exec, rows, function, "rows");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(ids.size()) == rows.rows,
                  "shift_and_divide_rows: {} ids for {} rows", ids.size(), rows.rows);
  if (detail::span_reachable(exec, ids.data(), function, "ids")) {
    detail::check_vertices_below(ids, static_cast<std::int64_t>(divisors.size()), function, "ids");
    if (detail::span_reachable(exec, divisors.data(), function, "divisors"))
      check_divisors(divisors, ids.data(), rows.rows);
  }
  detail::dispatch(
      exec, function, [&] { reference::shift_and_divide_rows(rows, shift, divisors, ids.data()); },
      [&] { cpu::shift_and_divide_rows(rows, shift, divisors, ids.data()); });
}

void shift_and_divide_rows(const executor& exec, dense_view<float> table, float shift,
                           std::span<const float> divisors) {
  constexpr std::string_view function = "shift_and_divide_rows";
  detail::check_dense(exec, table, function, "table");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(divisors.size()) == table.rows,
                  "shift_and_divide_rows: {} divisors for a table of {} rows", divisors.size(),
                  table.rows);
  if (detail::span_reachable(exec, divisors.data(), function, "divisors"))
    check_divisors(divisors, nullptr, table.rows);
  detail::dispatch(
      exec, function, [&] { reference::shift_and_divide_rows(table, shift, divisors, nullptr); },
      [&] { cpu::shift_and_divide_rows(table, shift, divisors, nullptr); });
}

}  // namespace bulkgnn::kernels
