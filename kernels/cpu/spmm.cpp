#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <functional>

#include "bulkgnn/kernels/rules/cached_rows.hpp"
#include "bulkgnn/kernels/rules/dot.hpp"
#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

// Adds value · x_row to out, element by element: each output element gets
// its row's products in stored order, as in the reference. The loop runs
// over feature columns, so it vectorises without reordering any sum.
void add_scaled(float* __restrict out, const float* __restrict x_row, float value,
                std::int64_t cols) {
  for (std::int64_t j = 0; j < cols; ++j) out[j] += value * x_row[j];
}

// Row ranges of `a` holding about equal shares of its entries, one per chunk.
std::vector<std::int64_t> balanced_chunks(csr_view a, std::int64_t chunks) {
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(chunks) + 1, a.rows);
  bounds[0] = 0;
  const edge_t base = a.indptr.front();
  const edge_t nnz = a.nnz();
  const auto first = a.indptr.begin();
  for (std::int64_t p = 1; p < chunks; ++p)
    bounds[p] = std::lower_bound(first, first + a.rows, base + nnz * p / chunks) - first;
  return bounds;
}

}  // namespace

void spmm(csr_view a, dense_view<const float> x, dense_view<float> y) {
  for_each_row(a.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t r = range.begin(); r < range.end(); ++r) {
      const auto out = y.row(r);
      std::fill(out.begin(), out.end(), 0.0f);
      const auto columns = a.row(r);
      const auto values = a.weighted() ? a.row_values(r) : std::span<const float>{};
      for (std::size_t e = 0; e < columns.size(); ++e)
        add_scaled(out.data(), x.row(columns[e]).data(), a.weighted() ? values[e] : 1.0f, x.cols);
    }
  });
}

void sddmm(csr_view pattern, dense_view<const float> a, dense_view<const float> b,
           std::span<float> out) {
  const edge_t base = pattern.indptr.front();
  for_each_row(pattern.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t r = range.begin(); r < range.end(); ++r) {
      const float* a_row = a.row(r).data();
      const auto columns = pattern.row(r);
      float* row_out = out.data() + (pattern.indptr[r] - base);
      for (std::size_t e = 0; e < columns.size(); ++e)
        row_out[e] = rules::dot_in_order(a_row, b.row(columns[e]).data(), a.cols);
    }
  });
}

// Parallel counting sort by column. The rows of `a` are split into chunks;
// each chunk counts its columns, an exclusive scan over (column, chunk) gives
// every chunk its own cursor inside each output row, and the chunks fill in
// parallel. Chunks are ordered by row and each fills in storage order, so
// every output row lists its source rows in increasing order, as the
// reference does.
csr_matrix transpose(csr_view a) {
  csr_matrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  const edge_t nnz = a.nnz();
  // Counts take chunks × cols memory: bound it by a small multiple of nnz.
  const std::int64_t concurrency = tbb::this_task_arena::max_concurrency();
  const std::int64_t chunks = std::clamp<std::int64_t>(
      std::min<std::int64_t>((2 * nnz + 65536) / std::max<std::int64_t>(a.cols, 1),
                             (nnz + 4095) / 4096),
      1, 4 * concurrency);
  const auto bounds = balanced_chunks(a, chunks);
  const auto cols = static_cast<std::size_t>(a.cols);
  std::vector<edge_t> cursor(static_cast<std::size_t>(chunks) * cols, 0);

  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t p) {
    edge_t* count = cursor.data() + p * cols;
    for (std::int64_t r = bounds[p]; r < bounds[p + 1]; ++r)
      for (const vertex_t c : a.row(r)) ++count[c];
  });

  t.indptr.assign(cols + 1, 0);
  for_each_row(a.cols, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t c = range.begin(); c < range.end(); ++c) {
      edge_t total = 0;
      for (std::int64_t p = 0; p < chunks; ++p) total += std::exchange(cursor[p * cols + c], total);
      t.indptr[c + 1] = total;
    }
  });
  std::inclusive_scan(t.indptr.begin(), t.indptr.end(), t.indptr.begin());
  t.indices.resize(static_cast<std::size_t>(nnz));
  if (a.weighted()) t.values.resize(t.indices.size());

  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t p) {
    edge_t* offset = cursor.data() + p * cols;
    for (std::int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
      const auto columns = a.row(r);
      const auto values = a.weighted() ? a.row_values(r) : std::span<const float>{};
      for (std::size_t e = 0; e < columns.size(); ++e) {
        const edge_t at = t.indptr[columns[e]] + offset[columns[e]]++;
        t.indices[at] = static_cast<vertex_t>(r);
        if (a.weighted()) t.values[at] = values[e];
      }
    }
  });
  return t;
}

void gather_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows,
                       dense_view<float> out) {
  for_each_row(out.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const auto source = x.row(rows[i]);
      std::copy(source.begin(), source.end(), out.row(i).begin());
    }
  });
}

void scatter_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows, float scale,
                        dense_view<float> out) {
  for_each_row(x.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const auto source = x.row(i);
      std::transform(source.begin(), source.end(), out.row(rows[i]).begin(),
                     [scale](float v) { return scale * v; });
    }
  });
}

std::int64_t gather_cached_rows(const cached_rows& x, std::span<const vertex_t> rows,
                                dense_view<float> out) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, out.rows, 256), std::int64_t{0},
      [&](const tbb::blocked_range<std::int64_t>& range, std::int64_t hits) {
        for (std::int64_t i = range.begin(); i < range.end(); ++i) {
          const float* source = rules::cached_row_source(x.all.data.data(), x.cache.data.data(),
                                                         x.slot_of.data(), x.all.cols, rows[i]);
          hits += x.slot_of[rows[i]] >= 0 ? 1 : 0;
          std::copy(source, source + x.all.cols, out.row(i).begin());
        }
        return hits;
      },
      std::plus<>());
}

}  // namespace bulkgnn::kernels::cpu
