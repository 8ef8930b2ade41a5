#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
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
