#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <memory>

namespace bulkgnn::session::detail {

// How the sampler of `options` cuts epochs into subgraphs
// (sampler_entry::subgraph_batching: Cluster-GCN's METIS clusters,
// GraphSAINT's drawn subgraphs), made from the whole `graph` for minibatches
// of batch_size (the sampler's unit), on `exec`'s threads; null for a sampler
// that batches seeds. option_error where the
// graph is not held whole (a rank's part of a partitioned dataset).
[[nodiscard]] std::shared_ptr<const sampler::subgraph_batches> subgraphs_for(
    csr_view graph, std::int64_t num_vertices, const sampler::sampler_options& options,
    std::int64_t batch_size, const executor& exec);

}  // namespace bulkgnn::session::detail
