#include "bulkgnn/trainer/layers.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "bulkgnn/trainer/placement.hpp"

namespace bulkgnn::trainer {

namespace {

// The contents only where the host can read them; a device block comes from
// a back end that built it well-formed.
void check_block(csr_view block, std::string_view function) {
  if (host_accessible(block.space)) {
    const auto problem = find_csr_problem(block);
    BULKGNN_EXPECTS(problem.empty(), "{}: block: {}", function, problem);
  } else {
    BULKGNN_EXPECTS(static_cast<std::int64_t>(block.indptr.size()) == block.rows + 1 &&
                        (block.values.empty() || block.values.size() == block.indices.size()),
                    "{}: block: {} rows but {} offsets, {} values for {} entries", function,
                    block.rows, block.indptr.size(), block.values.size(), block.indices.size());
  }
  BULKGNN_EXPECTS(block.rows <= block.cols,
                  "{}: block has {} destinations but only {} sources; destinations must be "
                  "the first sources",
                  function, block.rows, block.cols);
}

// `m` copied into the memory of `exec` (not merely into its own resource,
// which may be another stream's), indptr from 0: a device matrix, which the
// host cannot rebase, must start from 0 already.
csr_matrix own_copy(const executor& exec, csr_view m) {
  if (needs_placing(exec, m.space) || host_accessible(m.space)) return copy_for(exec, m);
  csr_matrix copy;
  copy.rows = m.rows;
  copy.cols = m.cols;
  copy.indptr = copy_to(m.indptr, exec.memory());
  copy.indices = copy_to(m.indices, exec.memory());
  copy.values = copy_to(m.values, exec.memory());
  return copy;
}

csr_matrix pattern_copy(const executor& exec, csr_view m) {
  m.values = {};
  return own_copy(exec, m);
}

csr_matrix row_means(const executor& exec, csr_view m) {
  csr_matrix mean = pattern_copy(exec, m);
  mean.values = buffer<float>(mean.indices.size(), exec.memory());
  kernels::fill(exec, std::span<float>(mean.values.data(), mean.values.size()), 1.0f);
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

// D̃⁻¹(A+I): the self loop added where the row lacks it, each row normalised
// to sum 1.
csr_matrix row_means_with_self_loops(const executor& exec, csr_view graph) {
  const bool place = needs_placing(exec, graph.space);
  const csr_matrix placed_graph = place ? copy_for(exec, graph) : csr_matrix{};
  const csr_matrix self_loops = needs_placing(exec, memory_space::host)
                                    ? copy_for(exec, identity(graph.rows).view())
                                    : identity(graph.rows);
  csr_matrix normalised =
      kernels::add(exec, place ? placed_graph.view() : graph, self_loops.view());
  kernels::normalize_rows(exec, normalised);
  return normalised;
}

aggregation_block with_transpose(const executor& exec, csr_matrix forward, bool with_backward) {
  aggregation_block block{.forward = std::move(forward), .backward = {}};
  if (with_backward) block.backward = kernels::transpose(exec, block.forward.view());
  return block;
}

}  // namespace

layer_kind parse_layer_kind(const std::string& name) {
  return find_layer(name, "parse_layer_kind").kind;
}

std::string layer_kind_name(layer_kind kind) { return std::string(find_layer(kind).name); }

aggregation_block make_aggregation_block(const executor& exec, const csr_matrix& block,
                                         layer_kind kind, bool with_backward) {
  check_block(block.view(), "make_aggregation_block");
  const auto& layer = find_layer(kind);
  switch (layer.sampled_block) {
    case adjacency_weights::row_mean:
      return with_transpose(exec, row_means(exec, block.view()), with_backward);
    case adjacency_weights::as_sampled:
      // A block without entries has no values to carry (a drawn subgraph
      // whose seeds read no edge).
      BULKGNN_EXPECTS(block.view().weighted() || block.view().nnz() == 0,
                      "make_aggregation_block: a {} layer needs a weighted block (LADIES, "
                      "FastGCN or GraphSAINT sampling), got a pattern",
                      layer.name);
      return with_transpose(exec, own_copy(exec, block.view()), with_backward);
    default:
      throw internal_error(fmt::format(
          "make_aggregation_block: the {} layer's block weights are not for sampled blocks",
          layer.name));
  }
}

aggregation_block full_graph_block(const executor& exec, csr_view graph, layer_kind kind,
                                   bool with_backward) {
  BULKGNN_EXPECTS(graph.rows == graph.cols, "full_graph_block: graph is {}x{}, not square",
                  graph.rows, graph.cols);
  if (host_accessible(graph.space)) {
    const auto problem = find_csr_problem(graph);
    BULKGNN_EXPECTS(problem.empty(), "full_graph_block: graph: {}", problem);
  }
  graph.values = {};
  const auto& layer = find_layer(kind);
  switch (layer.full_graph) {
    case adjacency_weights::row_mean:
      return with_transpose(exec, row_means(exec, graph), with_backward);
    case adjacency_weights::row_mean_with_self_loops:
      return with_transpose(exec, row_means_with_self_loops(exec, graph), with_backward);
    default:
      throw internal_error(fmt::format(
          "full_graph_block: no whole-graph block for the {} layer's weights", layer.name));
  }
}

}  // namespace bulkgnn::trainer
