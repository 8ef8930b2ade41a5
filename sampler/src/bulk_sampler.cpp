#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "hop_helpers.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace bulkgnn::sampler {

namespace {

using detail::pattern_of;
using detail::stream_ids;

}  // namespace

sampler_kind parse_sampler_kind(const std::string& name) {
  if (name == "sage" || name == "node-wise") return sampler_kind::node_wise;
  if (name == "ladies") return sampler_kind::ladies;
  if (name == "fastgcn") return sampler_kind::fastgcn;
  throw option_error(
      "parse_sampler_kind: sampler_options.kind must be one of sage, ladies, fastgcn; got '" +
      name + "'");
}

std::string sampler_kind_name(sampler_kind kind) {
  switch (kind) {
    case sampler_kind::node_wise:
      return "sage";
    case sampler_kind::ladies:
      return "ladies";
    case sampler_kind::fastgcn:
      return "fastgcn";
  }
  return "unknown";
}

void validate(const sampler_options& options, bool graph_weighted) {
  BULKGNN_EXPECTS(!options.fanouts.empty(), "sampler_options.fanouts must list at least one hop");
  for (std::size_t h = 0; h < options.fanouts.size(); ++h)
    BULKGNN_EXPECTS(
        (options.fanouts[h] > 0 && options.fanouts[h] <= (1 << 24)) || options.fanouts[h] == -1,
        "sampler_options.fanouts: hop {} has fanout {}; use a count in [1, 2^24] or -1 for all", h,
        options.fanouts[h]);
  BULKGNN_EXPECTS(options.fanouts.size() < 0xFFFFu, "sampler_options.fanouts: too many hops");
  if (options.kind != sampler_kind::node_wise) {
    BULKGNN_EXPECTS(options.replacement == kernels::replacement::without,
                    "sampler_options.replacement applies to node-wise sampling only");
    BULKGNN_EXPECTS(!options.weighted,
                    "sampler_options.weighted applies to node-wise sampling only");
  }
  BULKGNN_EXPECTS(!options.weighted || graph_weighted,
                  "sampler_options.weighted needs edge weights, and this graph has none");
}

bulk_sampler::bulk_sampler(csr_view graph, sampler_options options, executor exec)
    : own_rows_(std::make_unique<local_rows>(graph)),
      rows_(*own_rows_),
      options_(std::move(options)),
      exec_(exec) {
  initialise();
}

bulk_sampler::bulk_sampler(row_source& rows, sampler_options options, executor exec)
    : rows_(rows), options_(std::move(options)), exec_(exec) {
  initialise();
}

void bulk_sampler::initialise() {
  validate(options_, rows_.weighted());
  BULKGNN_EXPECTS(exec_.kind() != backend::cuda || rows_.whole_graph() != nullptr,
                  "bulk_sampler: the cuda back end samples a graph held whole in this process "
                  "only so far");
  // A sharded graph computes FastGCN's distribution by columns at the first
  // hop (global_weights_in_range), collectively.
  if (options_.kind == sampler_kind::fastgcn && rows_.whole_graph() != nullptr) {
    segmented_vertices everyone;
    everyone.vertices.resize(static_cast<std::size_t>(rows_.num_vertices()));
    std::iota(everyone.vertices.begin(), everyone.vertices.end(), 0);
    everyone.offsets.push_back(rows_.num_vertices());
    global_column_weights_ = column_weights(on_executor(std::move(everyone)));
  }
}

bulk_sample bulk_sampler::sample(const epoch_plan& plan, std::int64_t first_minibatch,
                                 std::int64_t count) {
  BULKGNN_EXPECTS(
      first_minibatch >= 0 && count > 0 && first_minibatch + count <= plan.num_minibatches(),
      "bulk_sampler::sample: minibatches [{}, {}) outside the epoch's {}", first_minibatch,
      first_minibatch + count, plan.num_minibatches());
  segmented_vertices seeds;
  std::vector<std::int64_t> ids;
  for (std::int64_t j = 0; j < count; ++j) {
    seeds.push_segment(plan.seeds(first_minibatch + j));
    ids.push_back(first_minibatch + j);
  }
  return sample(plan.epoch(), std::move(seeds), ids);
}

bulk_sample bulk_sampler::sample(std::uint32_t epoch, segmented_vertices seeds,
                                 std::span<const std::int64_t> minibatch_ids) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(minibatch_ids.size()) == seeds.segments(),
                  "bulk_sampler::sample: {} minibatch ids for {} seed segments",
                  minibatch_ids.size(), seeds.segments());
  for (const auto id : minibatch_ids)
    BULKGNN_EXPECTS(id >= 0 && id <= 0xFFFFFFFFll, "bulk_sampler::sample: minibatch id {}", id);
  for (const vertex_t v : seeds.vertices)
    BULKGNN_EXPECTS(v >= 0 && v < rows_.num_vertices(),
                    "seed vertex {} is outside the graph's {} vertices", v, rows_.num_vertices());
  // A FastGCN draw does not depend on the frontier, so it may take vertices
  // that no destination links to; sampled as the parts are, a minibatch
  // keeps only what its seeds reach (and splits over ranks exactly).
  if (options_.kind == sampler_kind::fastgcn) {
    segmented_vertices whole = on_executor(seeds);
    return sample_layer_wise_parts(epoch, std::move(whole), on_executor(std::move(seeds)),
                                   minibatch_ids, nullptr);
  }
  bulk_sample bulk;
  bulk.minibatch_ids.assign(minibatch_ids.begin(), minibatch_ids.end());
  bulk.seeds = on_executor(std::move(seeds));
  const segmented_vertices* frontier = &bulk.seeds;
  for (std::size_t hop = 0; hop < options_.fanouts.size(); ++hop) {
    const auto h = static_cast<std::uint32_t>(hop);
    if (options_.kind == sampler_kind::node_wise)
      bulk.layers.push_back(sample_node_wise(*frontier, minibatch_ids, epoch, h));
    else
      bulk.layers.push_back(sample_layer_wise(*frontier, minibatch_ids, epoch, h));
    frontier = &bulk.layers.back().sources;
  }
  return bulk;
}

sampled_layer bulk_sampler::sample_node_wise(const segmented_vertices& frontier,
                                             std::span<const std::int64_t> minibatch_ids,
                                             std::uint32_t epoch, std::uint32_t hop) {
  const auto ids = stream_ids(minibatch_ids);
  const auto minibatch_of_row =
      kernels::repeat_per_segment(exec_, frontier.offsets, on_executor(std::span(ids)));
  const kernels::row_sampling_options draw{
      .fanout = options_.fanouts[hop],
      .mode = options_.replacement,
      .weights = options_.weighted ? kernels::weighting::by_value : kernels::weighting::uniform};
  const kernels::row_streams streams{options_.seed, epoch, hop, minibatch_of_row,
                                     frontier.vertices};
  csr_matrix drawn;
  {
    // Fetching and drawing are one stage: a sharded source may draw remotely.
    executor_stage stage(exec_, times_, device_log_, "draw_rows");
    drawn = rows_.draw_rows(exec_, frontier.vertices, streams, draw);
  }
  executor_stage stage(exec_, times_, device_log_, "relabel");
  auto relabelled = kernels::relabel_by_segment(exec_, frontier, drawn.view());
  return {std::move(relabelled.sources), std::move(relabelled.blocks), frontier.offsets};
}

segmented_vertices bulk_sampler::on_executor(segmented_vertices vertices) const {
  if (exec_.device() == nullptr) return vertices;
  // The device reads the offsets through UVA; the host keeps reading them.
  segmented_vertices there;
  there.vertices = copy_to(std::span<const vertex_t>(vertices.vertices), exec_.memory());
  there.offsets =
      copy_to(std::span<const std::int64_t>(vertices.offsets), exec_.device()->pinned_memory());
  return there;
}

buffer<std::uint32_t> bulk_sampler::on_executor(std::span<const std::uint32_t> values) const {
  return copy_to(values, exec_.memory());
}

buffer<vertex_t> bulk_sampler::on_executor(std::span<const vertex_t> values) const {
  return copy_to(values, exec_.memory());
}

const stage_times& bulk_sampler::device_times() {
  if (exec_.device() != nullptr) device_log_.collect(*exec_.device(), device_times_);
  return device_times_;
}

gathered_rows bulk_sampler::fetch_rows(std::span<const vertex_t> vertices) {
  executor_stage stage(exec_, times_, device_log_, "fetch_rows");
  return rows_.rows(vertices);
}

csr_matrix bulk_sampler::column_weights(const segmented_vertices& frontier) {
  const auto distinct = kernels::sorted_distinct(exec_, frontier.vertices);
  const auto rows = fetch_rows(distinct);
  return column_weights(frontier, distinct, rows);
}

csr_matrix bulk_sampler::column_weights(const segmented_vertices& frontier,
                                        std::span<const vertex_t> distinct,
                                        const gathered_rows& rows) {
  executor_stage stage(exec_, times_, device_log_, "spgemm");
  const csr_matrix q = kernels::frontier_selection(exec_, frontier, distinct, rows.rows,
                                                   rows.row_of, rows_.num_vertices());
  // Q's columns renamed from vertex ids to fetched rows: order-preserving, so
  // Q·A sums in the same order either way.
  const csr_matrix q_on_rows =
      kernels::rename_columns(exec_, q.view(), distinct, rows.row_of, rows.rows.rows);
  const csr_matrix qa = kernels::spgemm(exec_, q_on_rows.view(), pattern_of(rows.rows));
  return kernels::add(exec_, qa.view(), q.view());
}

sampled_layer bulk_sampler::sample_layer_wise(const segmented_vertices& frontier,
                                              std::span<const std::int64_t> minibatch_ids,
                                              std::uint32_t epoch, std::uint32_t hop) {
  const std::int64_t count = frontier.segments();
  // LADIES reads the frontier's rows twice (weights, then blocks): fetch once.
  const auto distinct = kernels::sorted_distinct(exec_, frontier.vertices);
  const auto rows = fetch_rows(distinct);
  const csr_matrix weights = column_weights(frontier, distinct, rows);

  // Minibatch j draws from row j of the weights; its stream is keyed by the
  // minibatch alone, since row j's number depends on the bulk.
  std::vector<vertex_t> row_numbers(count);
  std::iota(row_numbers.begin(), row_numbers.end(), 0);
  const auto weight_row = on_executor(std::span<const vertex_t>(row_numbers));
  const auto minibatch_of_row =
      on_executor(std::span<const std::uint32_t>(stream_ids(minibatch_ids)));
  const auto zero_key_rows =
      on_executor(std::span<const vertex_t>(std::vector<vertex_t>(count, 0)));
  csr_matrix drawn;
  {
    executor_stage stage(exec_, times_, device_log_, "sample_rows");
    drawn = kernels::sample_rows(
        exec_, weights.view(), weight_row,
        kernels::row_streams{options_.seed, epoch, hop, minibatch_of_row, zero_key_rows},
        kernels::row_sampling_options{.fanout = options_.fanouts[hop],
                                      .mode = kernels::replacement::without,
                                      .weights = kernels::weighting::by_value});
  }
  executor_stage stage(exec_, times_, device_log_, "extract");
  const auto spread = kernels::spread_to_segment_starts(exec_, drawn.view(), frontier.offsets);
  auto sources = kernels::relabel_by_segment(exec_, frontier, spread.view()).sources;

  // Every source has p > 0: drawn columns by construction, destinations
  // through their self loop. Importance weight 1/p; the row normalisation
  // below absorbs the constant factors of Â and of p's normaliser.
  buffer<float> inverse_p = kernels::lookup_entries(exec_, weights.view(), weight_row, sources);
  kernels::invert_probabilities(exec_, inverse_p);
  csr_matrix blocks = extract_layer_blocks(frontier, sources, inverse_p, distinct, rows);
  kernels::normalize_rows(exec_, blocks);
  return {std::move(sources), std::move(blocks), frontier.offsets};
}

csr_matrix bulk_sampler::extract_layer_blocks(const segmented_vertices& destinations,
                                              const segmented_vertices& sources,
                                              std::span<const float> inverse_p,
                                              std::span<const vertex_t> distinct,
                                              const gathered_rows& rows) {
  if (!rows.fetched) {
    return kernels::extract_blocks(exec_, pattern_of(rows.rows), destinations, sources, inverse_p,
                                   true);
  }
  // The fetched rows with their self loops, and the destinations renamed to
  // those rows: extracting blocks from these without adding self loops gives
  // what extract_blocks adding them gives on the whole graph.
  const auto looped = kernels::with_self_loops(exec_, rows.rows, rows.row_of, distinct);
  segmented_vertices destination_rows;
  destination_rows.vertices = kernels::positions_in_sorted(exec_, destinations.vertices, distinct);
  destination_rows.offsets = destinations.offsets;
  return kernels::extract_blocks(exec_, looped.view(), destination_rows, sources, inverse_p, false);
}

}  // namespace bulkgnn::sampler
