#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bulkgnn::testing {

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

}  // namespace bulkgnn::testing
