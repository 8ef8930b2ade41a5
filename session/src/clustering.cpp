#include "clustering.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::session::detail {

std::shared_ptr<const sampler::vertex_clusters> clusters_for(
    csr_view graph, std::int64_t num_vertices, const sampler::sampler_options& options) {
  if (!sampler::find_sampler(options.kind).batches_clusters) return nullptr;
  BULKGNN_EXPECTS(graph.rows == num_vertices && host_accessible(graph.space),
                  "sampler_options.kind {}: clustering reads the whole graph, and this process "
                  "holds {} of its {} vertices' rows (a partitioned dataset); use a dataset held "
                  "whole",
                  options.kind, graph.rows, num_vertices);
  const int count = sampler::cluster_count(options, num_vertices);
  auto partition =
      distributed::metis_partition(graph, count, static_cast<int>(options.seed & 0x7FFFFFFF));
  return std::make_shared<const sampler::vertex_clusters>(graph, std::move(partition.owner), count);
}

}  // namespace bulkgnn::session::detail
