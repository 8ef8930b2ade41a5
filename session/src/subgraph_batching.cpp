#include "subgraph_batching.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::session::detail {

std::shared_ptr<const sampler::subgraph_batches> subgraphs_for(
    csr_view graph, std::int64_t num_vertices, const sampler::sampler_options& options,
    std::int64_t batch_size, const executor& exec) {
  const auto& entry = sampler::find_sampler(options.kind);
  if (!entry.batches_subgraphs()) return nullptr;
  BULKGNN_EXPECTS(graph.rows == num_vertices && host_accessible(graph.space),
                  "sampler_options.kind {}: cutting epochs into subgraphs reads the whole graph, "
                  "and this process holds {} of its {} vertices' rows (a partitioned dataset); "
                  "use a dataset held whole",
                  options.kind, graph.rows, num_vertices);
  sampler::validate(options, graph.weighted());
  return entry.subgraph_batching(graph, options, batch_size, exec);
}

}  // namespace bulkgnn::session::detail
