#include <utility>
#include <vector>

#include "bulkgnn/kernels/rules/cached_rows.hpp"
#include "bulkgnn/kernels/rules/dot.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void spmm(csr_view a, dense_view<const float> x, dense_view<float> y) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto columns = a.row(r);
    for (std::int64_t j = 0; j < x.cols; ++j) {
      float sum = 0.0f;
      for (std::size_t e = 0; e < columns.size(); ++e) {
        const float value = a.weighted() ? a.row_values(r)[e] : 1.0f;
        sum += value * x.row(columns[e])[j];
      }
      y.row(r)[j] = sum;
    }
  }
}

void sddmm(csr_view pattern, dense_view<const float> a, dense_view<const float> b,
           std::span<float> out) {
  std::size_t e = 0;
  for (std::int64_t r = 0; r < pattern.rows; ++r)
    for (const vertex_t c : pattern.row(r))
      out[e++] = rules::dot_in_order(a.row(r).data(), b.row(c).data(), a.cols);
}

csr_matrix transpose(csr_view a) {
  // One bucket per column of `a`, filled by walking `a` in storage order.
  std::vector<std::vector<std::pair<vertex_t, float>>> buckets(static_cast<std::size_t>(a.cols));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto columns = a.row(r);
    for (std::size_t e = 0; e < columns.size(); ++e)
      buckets[columns[e]].emplace_back(static_cast<vertex_t>(r),
                                       a.weighted() ? a.row_values(r)[e] : 0.0f);
  }
  csr_matrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  for (const auto& bucket : buckets) {
    for (const auto& [row, value] : bucket) {
      t.indices.push_back(row);
      if (a.weighted()) t.values.push_back(value);
    }
    t.indptr.push_back(static_cast<edge_t>(t.indices.size()));
  }
  return t;
}

void gather_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows,
                       dense_view<float> out) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t j = 0; j < x.cols; ++j)
      out.row(static_cast<std::int64_t>(i))[j] = x.row(rows[i])[j];
}

void scatter_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows, float scale,
                        dense_view<float> out) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t j = 0; j < x.cols; ++j)
      out.row(rows[i])[j] = scale * x.row(static_cast<std::int64_t>(i))[j];
}

std::int64_t gather_cached_rows(const cached_rows& x, std::span<const vertex_t> rows,
                                dense_view<float> out) {
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float* source = rules::cached_row_source(x.all.data.data(), x.cache.data.data(),
                                                   x.slot_of.data(), x.all.cols, rows[i]);
    hits += x.slot_of[rows[i]] >= 0 ? 1 : 0;
    for (std::int64_t j = 0; j < x.all.cols; ++j)
      out.row(static_cast<std::int64_t>(i))[j] = source[j];
  }
  return hits;
}

}  // namespace bulkgnn::kernels::reference
