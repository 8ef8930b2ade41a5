#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/sampler/clusters.hpp"
#include "bulkgnn/sampler/options.hpp"

#include <memory>

namespace bulkgnn::session::detail {

// The METIS clusters of `graph` that the sampler of `options` batches
// (sampler_entry::batches_clusters), METIS seeded by the sampler's seed so
// that every seed is one whole draw; null for any other sampler.
// option_error where the graph is not held whole (a rank's part of a
// partitioned dataset).
[[nodiscard]] std::shared_ptr<const sampler::vertex_clusters> clusters_for(
    csr_view graph, std::int64_t num_vertices, const sampler::sampler_options& options);

}  // namespace bulkgnn::session::detail
