#include "bulkgnn/trainer/layers.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"

namespace bulkgnn::trainer {

namespace {

void check_block(csr_view block, std::string_view function) {
  const auto problem = find_csr_problem(block);
  BULKGNN_EXPECTS(problem.empty(), "{}: block: {}", function, problem);
  BULKGNN_EXPECTS(block.rows <= block.cols,
                  "{}: block has {} destinations but only {} sources; destinations must be "
                  "the first sources",
                  function, block.rows, block.cols);
}

csr_matrix pattern_copy(csr_view m) {
  csr_matrix copy;
  copy.rows = m.rows;
  copy.cols = m.cols;
  copy.indptr.resize(m.indptr.size());
  for (std::size_t r = 0; r < m.indptr.size(); ++r) copy.indptr[r] = m.indptr[r] - m.indptr[0];
  copy.indices.assign(m.indices.begin(), m.indices.end());
  return copy;
}

csr_matrix row_means(const executor& exec, csr_view m) {
  csr_matrix mean = pattern_copy(m);
  mean.values.assign(mean.indices.size(), 1.0f);
  kernels::normalize_rows(exec, mean);
  return mean;
}

csr_matrix identity(std::int64_t n) {
  csr_matrix id;
  id.rows = n;
  id.cols = n;
  id.indptr.resize(static_cast<std::size_t>(n + 1));
  id.indices.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v <= n; ++v) id.indptr[v] = v;
  for (std::int64_t v = 0; v < n; ++v) id.indices[v] = static_cast<vertex_t>(v);
  return id;
}

aggregation_block with_transpose(const executor& exec, csr_matrix forward, bool with_backward) {
  aggregation_block block{.forward = std::move(forward), .backward = {}};
  if (with_backward) block.backward = kernels::transpose(exec, block.forward.view());
  return block;
}

}  // namespace

layer_kind parse_layer_kind(const std::string& name) {
  if (name == "sage") return layer_kind::sage;
  if (name == "gcn") return layer_kind::gcn;
  throw option_error(
      fmt::format("parse_layer_kind: unknown layer kind '{}' (expected sage or gcn)", name));
}

std::string layer_kind_name(layer_kind kind) { return kind == layer_kind::sage ? "sage" : "gcn"; }

aggregation_block make_aggregation_block(const executor& exec, const csr_matrix& block,
                                         layer_kind kind, bool with_backward) {
  check_block(block.view(), "make_aggregation_block");
  if (kind == layer_kind::sage)
    return with_transpose(exec, row_means(exec, block.view()), with_backward);
  BULKGNN_EXPECTS(block.view().weighted(),
                  "make_aggregation_block: a gcn layer needs a weighted block (LADIES or FastGCN "
                  "sampling), got a pattern");
  return with_transpose(exec, block, with_backward);
}

aggregation_block full_graph_block(const executor& exec, csr_view graph, layer_kind kind,
                                   bool with_backward) {
  BULKGNN_EXPECTS(graph.rows == graph.cols, "full_graph_block: graph is {}x{}, not square",
                  graph.rows, graph.cols);
  const auto problem = find_csr_problem(graph);
  BULKGNN_EXPECTS(problem.empty(), "full_graph_block: graph: {}", problem);
  graph.values = {};
  if (kind == layer_kind::sage) return with_transpose(exec, row_means(exec, graph), with_backward);
  csr_matrix normalised = kernels::add(exec, graph, identity(graph.rows).view());
  kernels::normalize_rows(exec, normalised);
  return with_transpose(exec, std::move(normalised), with_backward);
}

}  // namespace bulkgnn::trainer
