#include "bulkgnn/sampler/part_digests.hpp"

#include <map>

namespace bulkgnn::sampler {

std::vector<std::pair<std::int64_t, std::uint64_t>> merge_part_digests(
    comm::communicator& ranks, const epoch_plan& plan, std::int64_t hops,
    std::span<const destination_edges> mine) {
  const int p = ranks.size();
  std::vector<std::vector<destination_edges>> send(static_cast<std::size_t>(p));
  for (const auto& d : mine) send[static_cast<std::size_t>(d.minibatch % p)].push_back(d);
  std::map<std::int64_t, std::vector<destination_edges>> by_minibatch;
  for (const auto& from_rank : ranks.all_to_all(send))
    for (const auto& d : from_rank) by_minibatch[d.minibatch].push_back(d);
  std::vector<std::pair<std::int64_t, std::uint64_t>> digests;
  for (auto& [minibatch, destinations] : by_minibatch)
    digests.emplace_back(minibatch,
                         merge_digest(plan.seeds(minibatch), hops, std::move(destinations)));
  return digests;
}

}  // namespace bulkgnn::sampler
