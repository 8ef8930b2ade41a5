#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

// The digests of whole minibatches of `plan` from the parts that the ranks
// sampled of them (bulk_sampler::sample_slices): every rank passes the
// destinations of its parts of the same minibatches, and rank r gets back
// {minibatch, digest} for those whose position modulo the rank count is r,
// ascending. Each equals the whole minibatch's bulk_sample::digest, for any
// number of ranks, so a split run is checked against a single process.
// Collective over `ranks`.
[[nodiscard]] std::vector<std::pair<std::int64_t, std::uint64_t>> merge_part_digests(
    comm::communicator& ranks, const epoch_plan& plan, std::int64_t hops,
    std::span<const destination_edges> mine);

}  // namespace bulkgnn::sampler
