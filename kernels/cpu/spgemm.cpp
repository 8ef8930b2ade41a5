#include <tbb/enumerable_thread_specific.h>

#include <algorithm>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

double value_at(csr_view m, edge_t position_in_row, std::span<const float> row_values) {
  return m.weighted() ? static_cast<double>(row_values[position_in_row]) : 1.0;
}

// Dense accumulator over the columns of C (Gustavson). `stamp[c]` records the
// last row that touched column c, so nothing is cleared between rows.
struct dense_row {
  explicit dense_row(std::int64_t cols)
      : stamp(static_cast<std::size_t>(cols), -1), sum(static_cast<std::size_t>(cols)) {}
  std::vector<std::int64_t> stamp;
  std::vector<double> sum;
  std::vector<vertex_t> touched;
};

// Visits the columns of row i of A·B, with the product of the two entries,
// in the order A's row then B's row: the summation order of the contract.
template <class Visit>
void for_each_product(csr_view a, csr_view b, std::int64_t i, Visit&& visit) {
  const auto inner = a.row(i);
  const auto inner_values = a.weighted() ? a.row_values(i) : std::span<const float>{};
  for (std::size_t e = 0; e < inner.size(); ++e) {
    const double left = value_at(a, static_cast<edge_t>(e), inner_values);
    const auto columns = b.row(inner[e]);
    const auto values = b.weighted() ? b.row_values(inner[e]) : std::span<const float>{};
    for (std::size_t f = 0; f < columns.size(); ++f)
      visit(columns[f], left * value_at(b, static_cast<edge_t>(f), values));
  }
}

// Appends row i of A·B: columns ascending, each sum rounded once.
void append_row(csr_view a, csr_view b, std::int64_t i, dense_row& scratch,
                std::vector<vertex_t>& columns, std::vector<float>& values) {
  scratch.touched.clear();
  for_each_product(a, b, i, [&](vertex_t c, double product) {
    if (scratch.stamp[c] != i) {
      scratch.stamp[c] = i;
      scratch.sum[c] = 0.0;
      scratch.touched.push_back(c);
    }
    scratch.sum[c] += product;
  });
  // A row touching a good share of the columns (layer-wise sampling makes
  // such rows) is collected faster by scanning the accumulator in column
  // order than by sorting its touched list.
  const auto cols = static_cast<std::int64_t>(scratch.stamp.size());
  if (static_cast<std::int64_t>(scratch.touched.size()) * 16 > cols) {
    for (std::int64_t c = 0; c < cols; ++c) {
      if (scratch.stamp[c] != i) continue;
      columns.push_back(static_cast<vertex_t>(c));
      values.push_back(static_cast<float>(scratch.sum[c]));
    }
    return;
  }
  std::sort(scratch.touched.begin(), scratch.touched.end());
  for (const vertex_t c : scratch.touched) {
    columns.push_back(c);
    values.push_back(static_cast<float>(scratch.sum[c]));
  }
}

}  // namespace

csr_matrix spgemm(csr_view a, csr_view b) {
  tbb::enumerable_thread_specific<dense_row> scratch(b.cols);
  return build_rows(
      a.rows, b.cols,
      [&](std::int64_t i, std::vector<vertex_t>& columns, std::vector<float>& values) {
        append_row(a, b, i, scratch.local(), columns, values);
      });
}

namespace {

// Walks the union of two sorted rows; for each distinct column, `visit` gets
// the column and the runs of a and b holding it (either may be empty).
template <class Visit>
void merge_rows(csr_view a, csr_view b, std::int64_t i, Visit&& visit) {
  const auto x = a.row(i);
  const auto y = b.row(i);
  std::size_t p = 0;
  std::size_t q = 0;
  while (p < x.size() || q < y.size()) {
    const vertex_t column = q == y.size() || (p < x.size() && x[p] < y[q]) ? x[p] : y[q];
    const std::size_t p_end = std::upper_bound(x.begin() + p, x.end(), column) - x.begin();
    const std::size_t q_end = std::upper_bound(y.begin() + q, y.end(), column) - y.begin();
    visit(column, p, p_end, q, q_end);
    p = p_end;
    q = q_end;
  }
}

double run_sum(csr_view m, std::int64_t i, std::size_t begin, std::size_t end, double sum) {
  const auto values = m.weighted() ? m.row_values(i) : std::span<const float>{};
  for (std::size_t e = begin; e < end; ++e) sum += value_at(m, static_cast<edge_t>(e), values);
  return sum;
}

}  // namespace

csr_matrix add(csr_view a, csr_view b) {
  return build_rows(
      a.rows, a.cols,
      [&](std::int64_t i, std::vector<vertex_t>& columns, std::vector<float>& values) {
        merge_rows(a, b, i,
                   [&](vertex_t column, std::size_t p, std::size_t p_end, std::size_t q,
                       std::size_t q_end) {
                     columns.push_back(column);
                     values.push_back(
                         static_cast<float>(run_sum(b, i, q, q_end, run_sum(a, i, p, p_end, 0.0))));
                   });
      });
}

void normalize_rows(csr_matrix& m) {
  for_each_row(m.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const auto first = m.values.begin() + m.indptr[i];
      const auto last = m.values.begin() + m.indptr[i + 1];
      double sum = 0.0;
      for (auto v = first; v != last; ++v) sum += *v;
      if (sum == 0.0) continue;
      for (auto v = first; v != last; ++v) *v = static_cast<float>(*v / sum);
    }
  });
}

}  // namespace bulkgnn::kernels::cpu
