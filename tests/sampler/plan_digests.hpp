#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/clusters.hpp"

#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::testing {

// The epoch plan a sampler of `options` runs: batch_size seeds per
// minibatch; for Cluster-GCN batch_size / 10 clusters of ten vertices,
// spread over the graph; for another sampler whose minibatches are
// subgraphs, its own batching with batch_size.
inline sampler::epoch_plan plan_for(const sampler::sampler_options& options, csr_view graph,
                                    std::span<const vertex_t> train, std::int64_t batch_size,
                                    std::uint32_t epoch) {
  const auto& entry = sampler::find_sampler(options.kind);
  const auto seed = options.seed;
  if (!entry.batches_subgraphs()) return {train, batch_size, seed, epoch};
  if (entry.name != "cluster-gcn")
    return {train, batch_size, seed, epoch,
            entry.subgraph_batching(graph, options, batch_size, executor{})};
  const auto count = static_cast<int>(std::max<std::int64_t>(1, graph.rows / 10));
  std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(graph.rows));
  for (vertex_t v = 0; v < graph.rows; ++v)
    cluster_of[v] = static_cast<std::int32_t>((v * 7) % count);
  auto clusters =
      std::make_shared<const sampler::vertex_clusters>(graph, std::move(cluster_of), count);
  return {train, std::max<std::int64_t>(1, batch_size / 10), seed, epoch, std::move(clusters)};
}

// The brute-force model of minibatch j of a plan whose minibatches are
// subgraphs, untrimmed: every layer on A[V, V], V = the seeds and then the
// rest of the subgraph ascending (induced_blocks), no values.
inline sampler::minibatch planned_subgraph_model(csr_view g, const sampler::epoch_plan& plan,
                                                 std::int64_t j, std::size_t layers) {
  sampler::minibatch full;
  full.index = j;
  full.seeds.assign(plan.seeds(j).begin(), plan.seeds(j).end());
  std::vector<vertex_t> vertices(plan.seeds(j).begin(), plan.seeds(j).end());
  for (const vertex_t v : plan.subgraph(j))
    if (std::find(full.seeds.begin(), full.seeds.end(), v) == full.seeds.end())
      vertices.push_back(v);
  full.input_nodes.assign(vertices.begin(), vertices.end());
  full.blocks = induced_blocks(g, vertices, full.seeds.size(), layers);
  return full;
}

// The digests of every minibatch of `plan`, sampled `bulk` at a time.
inline std::vector<std::uint64_t> plan_digests(csr_view graph,
                                               const sampler::sampler_options& options,
                                               const sampler::epoch_plan& plan, std::int64_t bulk,
                                               backend kind = backend::cpu) {
  sampler::bulk_sampler sampler(graph, options, executor{kind});
  std::vector<std::uint64_t> digests;
  for (std::int64_t first = 0; first < plan.num_minibatches(); first += bulk) {
    const auto b = sampler.sample(plan, first, std::min(bulk, plan.num_minibatches() - first));
    for (std::int64_t j = 0; j < b.count(); ++j) digests.push_back(b.digest(j));
  }
  return digests;
}

// The digests of `plan` are the same sampled one minibatch at a time, 7 and
// 25 at a time, on the reference back end, and on 1, 2, 3 and 5 threads.
inline void expect_same_digests_for_any_bulk_threads_and_back_end(
    csr_view graph, const sampler::sampler_options& options, const sampler::epoch_plan& plan) {
  const auto reference = plan_digests(graph, options, plan, 1);
  EXPECT_EQ(plan_digests(graph, options, plan, 7), reference) << "bulk 7";
  EXPECT_EQ(plan_digests(graph, options, plan, 25, backend::reference), reference)
      << "reference back end";
  for (const int threads : {1, 2, 3, 5}) {
    const thread_limit limit(threads);
    EXPECT_EQ(plan_digests(graph, options, plan, 25), reference) << threads << " threads";
  }
}

// Expects building a sampler of `options` on `graph` to be refused with an
// option_error whose message names `names`.
inline void expect_sampler_refuses(csr_view graph, const sampler::sampler_options& options,
                                   const std::string& names) {
  try {
    sampler::bulk_sampler sampler(graph, options);
    ADD_FAILURE() << "accepted; expected a refusal naming " << names;
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

}  // namespace bulkgnn::testing
