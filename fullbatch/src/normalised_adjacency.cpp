#include "bulkgnn/fullbatch/normalised_adjacency.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bulkgnn::fullbatch {

namespace {

bool row_has(csr_view graph, vertex_t v, vertex_t column) {
  const auto* first = graph.indices.data() + graph.indptr[v];
  const auto* last = graph.indices.data() + graph.indptr[v + 1];
  return std::find(first, last, column) != last;
}

}  // namespace

std::vector<std::int64_t> degrees_with_self_loops(csr_view graph,
                                                  std::span<const vertex_t> vertices) {
  std::vector<std::int64_t> degrees;
  degrees.reserve(vertices.size());
  for (const auto v : vertices)
    degrees.push_back(graph.indptr[v + 1] - graph.indptr[v] + (row_has(graph, v, v) ? 0 : 1));
  return degrees;
}

csr_matrix normalised_rows(csr_view graph, std::span<const vertex_t> vertices,
                           const distributed::vertex_partition& partition, trainer::layer_kind kind,
                           std::span<const std::int64_t> degrees_by_new_id) {
  const auto& layer = trainer::find_layer(kind);
  BULKGNN_EXPECTS(layer.full_batch == trainer::adjacency_weights::row_mean ||
                      layer.full_batch == trainer::adjacency_weights::symmetric_with_self_loops,
                  "normalised_rows: no full-batch rows for the {} layer's weights", layer.name);
  const bool symmetric = layer.full_batch == trainer::adjacency_weights::symmetric_with_self_loops;
  BULKGNN_EXPECTS(!symmetric || static_cast<std::int64_t>(degrees_by_new_id.size()) == graph.rows,
                  "normalised_rows: {} degrees for {} vertices", degrees_by_new_id.size(),
                  graph.rows);
  csr_matrix rows;
  rows.rows = static_cast<std::int64_t>(vertices.size());
  rows.cols = graph.cols;
  std::vector<edge_t> indptr{0};
  std::vector<vertex_t> indices;
  std::vector<float> values;
  std::vector<std::pair<vertex_t, float>> row;
  for (const auto v : vertices) {
    row.clear();
    const auto begin = graph.indptr[v];
    const auto end = graph.indptr[v + 1];
    const vertex_t self = partition.new_id(v);
    if (symmetric) {
      const double self_scale = 1.0 / std::sqrt(static_cast<double>(degrees_by_new_id[self]));
      for (auto e = begin; e < end; ++e) {
        const vertex_t u = partition.new_id(graph.indices[e]);
        row.emplace_back(u, static_cast<float>(
                                self_scale / std::sqrt(static_cast<double>(degrees_by_new_id[u]))));
      }
      if (!row_has(graph, v, v))
        row.emplace_back(self, static_cast<float>(self_scale * self_scale));
    } else {
      const auto mean = static_cast<float>(1.0 / static_cast<double>(end - begin));
      for (auto e = begin; e < end; ++e) row.emplace_back(partition.new_id(graph.indices[e]), mean);
    }
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [u, value] : row) {
      indices.push_back(u);
      values.push_back(value);
    }
    indptr.push_back(static_cast<edge_t>(indices.size()));
  }
  rows.indptr = buffer<edge_t>(indptr);
  rows.indices = buffer<vertex_t>(indices);
  rows.values = buffer<float>(values);
  return rows;
}

}  // namespace bulkgnn::fullbatch
