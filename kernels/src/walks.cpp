#include "bulkgnn/kernels/walks.hpp"

#include <cmath>

#include "../cpu/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

buffer<vertex_t> node2vec_walks(const executor& exec, csr_view graph,
                                std::span<const vertex_t> starts, const node2vec_options& options) {
  constexpr std::string_view function = "node2vec_walks";
  detail::check_csr(exec, graph, function, "graph");
  BULKGNN_EXPECTS(graph.rows == graph.cols, "{}: the graph is {}x{}, not square", function,
                  graph.rows, graph.cols);
  BULKGNN_EXPECTS(graph.rows == 0 || graph.indptr[0] == 0,
                  "{}: the graph must be whole (its indptr starting at 0)", function);
  BULKGNN_EXPECTS(options.length >= 1 && options.length <= 65535,
                  "node2vec_options.length must be in [1, 65535] steps, got {}", options.length);
  BULKGNN_EXPECTS(std::isfinite(options.p) && options.p > 0,
                  "node2vec_options.p must be finite and positive, got {}", options.p);
  BULKGNN_EXPECTS(std::isfinite(options.q) && options.q > 0,
                  "node2vec_options.q must be finite and positive, got {}", options.q);
  BULKGNN_EXPECTS(starts.size() < (std::size_t{1} << 32), "{}: {} walks are more than 2^32",
                  function, starts.size());
  detail::check_vertices_below(starts, graph.rows, function, "starts");
  buffer<vertex_t> walks(starts.size() * static_cast<std::size_t>(options.length + 1));
  const std::span<vertex_t> out(walks.data(), walks.size());
  detail::dispatch(
      exec, function, [&] { reference::node2vec_walks(graph, starts, options, out); },
      [&] { cpu::node2vec_walks(graph, starts, options, out); });
  return walks;
}

}  // namespace bulkgnn::kernels
