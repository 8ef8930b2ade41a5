#include "bulkgnn/sampler/sampling_algorithm.hpp"

#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "hop_helpers.hpp"
#include "minibatch_parts.hpp"

#include <utility>

namespace bulkgnn::sampler {

bulk_sample per_destination_sampling::sample(std::uint32_t epoch, segmented_vertices seeds,
                                             std::span<const std::int64_t> minibatch_ids) {
  return detail::grow_hop_by_hop(context().exec, std::move(seeds), minibatch_ids,
                                 context().options.fanouts.size(),
                                 [&](const segmented_vertices& frontier, std::uint32_t hop) {
                                   return sample_hop(frontier, minibatch_ids, epoch, hop);
                                 });
}

bulk_sample per_destination_sampling::sample_part(std::uint32_t epoch, segmented_vertices whole,
                                                  segmented_vertices part,
                                                  std::span<const std::int64_t> minibatch_ids,
                                                  comm::communicator*) {
  if (!destinations_share_draws()) return sample(epoch, std::move(part), minibatch_ids);
  return parts_of(sample(epoch, whole, minibatch_ids), whole, part, context().options.kind);
}

buffer<std::uint32_t> per_destination_sampling::minibatch_of_rows(
    const segmented_vertices& frontier, std::span<const std::int64_t> minibatch_ids) const {
  return detail::minibatch_of_rows(context().exec, frontier, minibatch_ids);
}

buffer<std::uint32_t> detail::minibatch_of_rows(const executor& exec,
                                                const segmented_vertices& frontier,
                                                std::span<const std::int64_t> minibatch_ids) {
  const auto ids = stream_ids(minibatch_ids);
  return kernels::repeat_per_segment(exec, frontier.offsets, on_executor(exec, std::span(ids)));
}

sampled_layer per_destination_sampling::relabelled_hop(const segmented_vertices& frontier,
                                                       csr_view drawn) const {
  auto relabelled = detail::relabel_leaving_out_excluded(context(), frontier, drawn);
  return {std::move(relabelled.sources), std::move(relabelled.blocks), frontier.offsets};
}

kernels::relabelled_blocks detail::relabel_leaving_out_excluded(sampling_context& c,
                                                                const segmented_vertices& frontier,
                                                                csr_view drawn) {
  executor_stage stage(c.exec, c.times, c.device_log, "relabel");
  csr_matrix kept;
  if (c.excluded != nullptr) {
    kept = kernels::drop_excluded_edges(c.exec, drawn, frontier, *c.excluded);
    drawn = kept.view();
  }
  return kernels::relabel_by_segment(c.exec, frontier, drawn);
}

segmented_vertices on_executor(const executor& exec, segmented_vertices vertices) {
  if (exec.device() == nullptr) return vertices;
  segmented_vertices there;
  there.vertices = copy_to(std::span<const vertex_t>(vertices.vertices), exec.memory());
  there.offsets =
      copy_to(std::span<const std::int64_t>(vertices.offsets), exec.device()->pinned_memory());
  return there;
}

buffer<std::uint32_t> on_executor(const executor& exec, std::span<const std::uint32_t> values) {
  return copy_to(values, exec.memory());
}

buffer<vertex_t> on_executor(const executor& exec, std::span<const vertex_t> values) {
  return copy_to(values, exec.memory());
}

}  // namespace bulkgnn::sampler
