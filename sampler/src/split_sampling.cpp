// sample_slices: each data-parallel rank samples only its part of every
// minibatch, through its sampler's sample_part (per-destination samplers
// sample the slice alone; layer-wise ones share each hop by columns, see
// layer_wise/).
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

namespace bulkgnn::sampler {

namespace {

void check_split(const minibatch_split& split) {
  BULKGNN_EXPECTS(split.slices >= 1 && split.slice >= 0 && split.slice < split.slices,
                  "bulk_sampler::sample_slices: minibatch_split.slice {} of {} does not exist",
                  split.slice, split.slices);
  BULKGNN_EXPECTS(split.ranks == nullptr ||
                      (split.ranks->size() == split.slices && split.ranks->rank() == split.slice),
                  "bulk_sampler::sample_slices: minibatch_split.ranks is rank {} of {}, but the "
                  "split is slice {} of {}",
                  split.ranks ? split.ranks->rank() : 0, split.ranks ? split.ranks->size() : 0,
                  split.slice, split.slices);
}

}  // namespace

std::pair<std::int64_t, std::int64_t> slice_range(std::int64_t seeds, int slice, int slices) {
  return {seeds * slice / slices, seeds * (slice + 1) / slices};
}

bulk_sample bulk_sampler::sample_slices(const epoch_plan& plan, std::int64_t first_minibatch,
                                        std::int64_t count, const minibatch_split& split) {
  check_split(split);
  if (split.slices == 1) return sample(plan, first_minibatch, count);
  BULKGNN_EXPECTS(
      first_minibatch >= 0 && count > 0 && first_minibatch + count <= plan.num_minibatches(),
      "bulk_sampler::sample_slices: minibatches [{}, {}) outside the epoch's {}", first_minibatch,
      first_minibatch + count, plan.num_minibatches());
  segmented_vertices whole;
  segmented_vertices part;
  std::vector<std::int64_t> ids;
  for (std::int64_t j = first_minibatch; j < first_minibatch + count; ++j) {
    const auto seeds = plan.seeds(j);
    const auto [begin, end] =
        slice_range(static_cast<std::int64_t>(seeds.size()), split.slice, split.slices);
    whole.push_segment(seeds);
    part.push_segment(seeds.subspan(begin, end - begin));
    ids.push_back(j);
  }
  const plan_subgraphs scope(*context_, plan, first_minibatch, count);
  auto bulk =
      algorithm_->sample_part(plan.epoch(), std::move(whole), std::move(part), ids, split.ranks);
  bulk.whole_seeds = whole_seeds_of(plan, first_minibatch, count);
  return bulk;
}

}  // namespace bulkgnn::sampler
