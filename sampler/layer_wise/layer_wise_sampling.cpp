// LADIES and FastGCN: per hop, one SpGEMM gives every minibatch of the bulk
// its distribution over columns and one sampling pass draws them all.
//
// Split over data-parallel ranks (sample_part), draws depend on the whole
// frontier, so the ranks share the work of one hop by columns: each computes
// the columns [n·r/P, n·(r+1)/P) of the sampling distribution (every entry
// summed in the same order as the whole product, so bit-identical), draws
// the keys of its entries at their positions in the whole row's random
// stream, and the fanout smallest keys of all ranks' candidates are the whole
// row's draw. Every rank then knows the hop's sources; it extracts only the
// block rows its part reaches, renumbered as restrict_to_seeds numbers them.
// On a sharded graph whose owners cut rows (row_source::slices_at_owners),
// and for FastGCN on any sharded graph, a rank reads only its columns of the
// frontier's rows; the block entries, found among each rank's columns, are
// then gathered by every rank (sliced_blocks.cpp).
#include "layer_wise_sampling.hpp"

#include "../src/hop_helpers.hpp"
#include "../src/sliced_blocks.hpp"
#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "layer_wise_exclusion.hpp"
#include "layer_wise_steps.hpp"

#include <limits>
#include <numeric>
#include <utility>

namespace bulkgnn::sampler {

namespace {

using detail::pattern_of;

class layer_wise_sampling : public sampling_algorithm {
 public:
  bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                     std::span<const std::int64_t> minibatch_ids) override;
  bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole, segmented_vertices part,
                          std::span<const std::int64_t> minibatch_ids,
                          comm::communicator* ranks) override;
  // A link minibatch's edges leave LADIES' distribution and both samplers'
  // blocks (layer_wise_exclusion.hpp); FastGCN's distribution is the whole
  // graph's, the same for every minibatch, by definition.
  [[nodiscard]] bool leaves_out_edges() const override { return true; }

 protected:
  // global_distribution: FastGCN's one distribution for every minibatch.
  layer_wise_sampling(sampling_context& context, bool global_distribution);

 private:
  sampled_layer sample_layer_wise(const segmented_vertices& frontier,
                                  std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                                  std::uint32_t hop);

  // A hop of sample_part: the part of `whole` (this hop's frontier of each
  // minibatch) reached by `part` (a sub-list of it per segment), and the
  // whole next frontier.
  struct split_hop {
    sampled_layer part;
    segmented_vertices whole_sources;
  };
  bulk_sample sample_layer_wise_parts(std::uint32_t epoch, segmented_vertices whole,
                                      segmented_vertices part,
                                      std::span<const std::int64_t> minibatch_ids,
                                      comm::communicator* ranks);
  split_hop sample_layer_wise_part(const segmented_vertices& whole, const segmented_vertices& part,
                                   std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                                   std::uint32_t hop, comm::communicator& ranks);
  // The columns [first, last) of Q·(A + I) (LADIES) or of the global weights
  // (FastGCN), each entry bit-identical to the whole product's.
  csr_matrix column_weights_in_range(const segmented_vertices& frontier,
                                     std::span<const vertex_t> distinct, const gathered_rows& rows,
                                     vertex_t first, vertex_t last);
  // Where the owners cut the rows (or FastGCN has no whole graph here): the
  // frontier's rows restricted to [first, last), the columns [first, last)
  // of Q·(A + I) from them, and of FastGCN's distribution (computed from
  // every row's slice at the first hop, collectively, then kept), each entry
  // bit-identical to the whole product's.
  column_slices fetch_columns(std::span<const vertex_t> vertices, vertex_t first, vertex_t last);
  csr_matrix column_weights_from_slices(const segmented_vertices& frontier,
                                        std::span<const vertex_t> distinct,
                                        const column_slices& slices, vertex_t first, vertex_t last);
  csr_view global_weights_in_range(vertex_t first, vertex_t last, int slices);
  // The block rows of `part`'s destinations from every rank's slices of the
  // whole frontier's rows: each rank's entries into the sources, gathered.
  csr_matrix blocks_from_slices(const segmented_vertices& whole, const segmented_vertices& part,
                                const segmented_vertices& sources, std::span<const float> inverse_p,
                                std::span<const vertex_t> distinct, const column_slices& slices,
                                comm::communicator& ranks);
  // The columns [first, last) of a matrix sample_part reads often, kept
  // between calls (the range is the same for every call of a run's ranks).
  struct column_slice {
    vertex_t first = 0;
    vertex_t last = -1;
    int slices = 0;  // global_weights_in_range's key
    csr_matrix columns;
  };
  csr_view owned_columns(csr_view whole, column_slice& cache, vertex_t first, vertex_t last);
  csr_matrix draw_split_rows(csr_view weights, std::span<const vertex_t> weight_row,
                             const kernels::row_streams& streams, std::int64_t fanout,
                             comm::communicator& ranks);

  // LADIES' weights without each minibatch's excluded edges, and the
  // blocks without them (before their rows are normalised); no-ops
  // without exclusions.
  csr_matrix without_excluded(csr_matrix weights, const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, const gathered_rows& rows);
  void drop_excluded(csr_matrix& blocks, const segmented_vertices& destinations,
                     const segmented_vertices& sources);

  gathered_rows fetch_rows(std::span<const vertex_t> vertices);
  csr_matrix column_weights(const segmented_vertices& frontier);
  csr_matrix column_weights(const segmented_vertices& frontier, std::span<const vertex_t> distinct,
                            const gathered_rows& rows);

  template <class T>
  [[nodiscard]] auto on_executor(T&& values) const {
    return sampler::on_executor(exec_, std::forward<T>(values));
  }

  row_source& rows_;
  const sampler_options& options_;
  const executor& exec_;
  stage_times& times_;
  device_stage_log& device_log_;
  bool global_distribution_;
  csr_matrix global_column_weights_;  // FastGCN's distribution, computed once
  column_slice owned_graph_;
  column_slice owned_global_weights_;
};

layer_wise_sampling::layer_wise_sampling(sampling_context& context, bool global_distribution)
    : sampling_algorithm(context),
      rows_(context.rows),
      options_(context.options),
      exec_(context.exec),
      times_(context.times),
      device_log_(context.device_log),
      global_distribution_(global_distribution) {
  // A sharded graph computes FastGCN's distribution by columns at the first
  // hop (global_weights_in_range), collectively.
  if (global_distribution_ && rows_.whole_graph() != nullptr) {
    segmented_vertices everyone;
    everyone.vertices.resize(static_cast<std::size_t>(rows_.num_vertices()));
    std::iota(everyone.vertices.begin(), everyone.vertices.end(), 0);
    everyone.offsets.push_back(rows_.num_vertices());
    global_column_weights_ = column_weights(on_executor(std::move(everyone)));
  }
}

bulk_sample layer_wise_sampling::sample(std::uint32_t epoch, segmented_vertices seeds,
                                        std::span<const std::int64_t> minibatch_ids) {
  // A FastGCN draw does not depend on the frontier, so it may take vertices
  // that no destination links to; sampled as the parts are, a minibatch
  // keeps only what its seeds reach (and splits over ranks exactly).
  if (global_distribution_) {
    segmented_vertices whole = on_executor(seeds);
    return sample_layer_wise_parts(epoch, std::move(whole), on_executor(std::move(seeds)),
                                   minibatch_ids, nullptr);
  }
  return detail::grow_hop_by_hop(exec_, std::move(seeds), minibatch_ids, options_.fanouts.size(),
                                 [&](const segmented_vertices& frontier, std::uint32_t hop) {
                                   return sample_layer_wise(frontier, minibatch_ids, epoch, hop);
                                 });
}

bulk_sample layer_wise_sampling::sample_part(std::uint32_t epoch, segmented_vertices whole,
                                             segmented_vertices part,
                                             std::span<const std::int64_t> minibatch_ids,
                                             comm::communicator* ranks) {
  BULKGNN_EXPECTS(exec_.kind() != backend::cuda,
                  "bulk_sampler::sample_slices: layer-wise sampling split over ranks runs on the "
                  "host back ends only so far");
  return sample_layer_wise_parts(epoch, std::move(whole), std::move(part), minibatch_ids, ranks);
}

gathered_rows layer_wise_sampling::fetch_rows(std::span<const vertex_t> vertices) {
  executor_stage stage(exec_, times_, device_log_, "fetch_rows");
  return rows_.rows(vertices);
}

csr_matrix layer_wise_sampling::column_weights(const segmented_vertices& frontier) {
  const auto distinct = kernels::sorted_distinct(exec_, frontier.vertices);
  const auto rows = fetch_rows(distinct);
  return column_weights(frontier, distinct, rows);
}

csr_matrix layer_wise_sampling::column_weights(const segmented_vertices& frontier,
                                               std::span<const vertex_t> distinct,
                                               const gathered_rows& rows) {
  executor_stage stage(exec_, times_, device_log_, "spgemm");
  const csr_matrix q = kernels::frontier_selection(exec_, frontier, distinct, rows.rows,
                                                   rows.row_of, rows_.num_vertices());
  return detail::selection_times_rows(exec_, q.view(), distinct, rows, true);
}

sampled_layer layer_wise_sampling::sample_layer_wise(const segmented_vertices& frontier,
                                                     std::span<const std::int64_t> minibatch_ids,
                                                     std::uint32_t epoch, std::uint32_t hop) {
  // LADIES reads the frontier's rows twice (weights, then blocks): fetch once.
  const auto distinct = kernels::sorted_distinct(exec_, frontier.vertices);
  const auto rows = fetch_rows(distinct);
  const csr_matrix weights =
      without_excluded(column_weights(frontier, distinct, rows), frontier, distinct, rows);

  // Minibatch j draws from row j of the weights.
  const auto weight_rows = detail::rows_per_minibatch(exec_, minibatch_ids, false);
  csr_matrix drawn;
  {
    executor_stage stage(exec_, times_, device_log_, "sample_rows");
    drawn = kernels::sample_rows(
        exec_, weights.view(), weight_rows.rows, weight_rows.streams(options_.seed, epoch, hop),
        kernels::row_sampling_options{.fanout = options_.fanouts[hop],
                                      .mode = kernels::replacement::without,
                                      .weights = kernels::weighting::by_value});
  }
  executor_stage stage(exec_, times_, device_log_, "extract");
  auto sources = detail::frontier_then_drawn(exec_, frontier, drawn.view());

  // Every source has p > 0: drawn columns by construction, destinations
  // through their self loop. Importance weight 1/p; the row normalisation
  // below absorbs the constant factors of Â and of p's normaliser.
  buffer<float> inverse_p =
      kernels::lookup_entries(exec_, weights.view(), weight_rows.rows, sources);
  kernels::invert_probabilities(exec_, inverse_p);
  csr_matrix blocks =
      detail::extract_layer_blocks(exec_, frontier, sources, inverse_p, distinct, rows, true);
  drop_excluded(blocks, frontier, sources);
  kernels::normalize_rows(exec_, blocks);
  return {std::move(sources), std::move(blocks), frontier.offsets};
}

csr_matrix layer_wise_sampling::without_excluded(csr_matrix weights,
                                                 const segmented_vertices& frontier,
                                                 std::span<const vertex_t> distinct,
                                                 const gathered_rows& rows) {
  const auto* excluded = context().excluded;
  if (excluded == nullptr) return weights;
  BULKGNN_EXPECTS(host_accessible(exec_.memory().space()),
                  "bulk_sampler: layer-wise sampling leaves excluded edges out on the host back "
                  "ends only so far");
  executor_stage stage(exec_, times_, device_log_, "exclude");
  const csr_matrix q = kernels::frontier_selection(exec_, frontier, distinct, rows.rows,
                                                   rows.row_of, rows_.num_vertices());
  return detail::weights_without_excluded(weights.view(), q.view(), rows.rows, rows.row_of,
                                          distinct, *excluded);
}

void layer_wise_sampling::drop_excluded(csr_matrix& blocks, const segmented_vertices& destinations,
                                        const segmented_vertices& sources) {
  const auto* excluded = context().excluded;
  if (excluded == nullptr) return;
  BULKGNN_EXPECTS(host_accessible(exec_.memory().space()),
                  "bulk_sampler: layer-wise sampling leaves excluded edges out on the host back "
                  "ends only so far");
  detail::drop_excluded_entries(blocks, destinations, sources, *excluded);
}

bulk_sample layer_wise_sampling::sample_layer_wise_parts(
    std::uint32_t epoch, segmented_vertices whole, segmented_vertices part,
    std::span<const std::int64_t> minibatch_ids, comm::communicator* ranks) {
  comm::traffic_log uncounted;
  comm::self_communicator alone("sampling", uncounted);
  bulk_sample bulk;
  bulk.minibatch_ids.assign(minibatch_ids.begin(), minibatch_ids.end());
  bulk.seeds = std::move(part);
  const segmented_vertices* part_frontier = &bulk.seeds;
  for (std::size_t hop = 0; hop < options_.fanouts.size(); ++hop) {
    auto step = sample_layer_wise_part(whole, *part_frontier, minibatch_ids, epoch,
                                       static_cast<std::uint32_t>(hop), ranks ? *ranks : alone);
    bulk.layers.push_back(std::move(step.part));
    whole = std::move(step.whole_sources);
    part_frontier = &bulk.layers.back().sources;
  }
  return bulk;
}

csr_view layer_wise_sampling::owned_columns(csr_view whole, column_slice& cache, vertex_t first,
                                            vertex_t last) {
  if (first == 0 && last == whole.cols) return whole;
  if (cache.first != first || cache.last != last) {
    cache.columns = kernels::columns_in_range(exec_, whole, first, last);
    cache.first = first;
    cache.last = last;
  }
  return cache.columns.view();
}

csr_matrix layer_wise_sampling::column_weights_in_range(const segmented_vertices& frontier,
                                                        std::span<const vertex_t> distinct,
                                                        const gathered_rows& rows, vertex_t first,
                                                        vertex_t last) {
  executor_stage stage(exec_, times_, device_log_, "spgemm");
  const bool everything = first == 0 && last == rows_.num_vertices();
  const csr_matrix q = kernels::frontier_selection(exec_, frontier, distinct, rows.rows,
                                                   rows.row_of, rows_.num_vertices());
  const csr_matrix q_on_rows =
      kernels::rename_columns(exec_, q.view(), distinct, rows.row_of, rows.rows.rows);
  // In-memory rows are the whole graph (its owned columns kept between
  // calls); fetched rows are this hop's own.
  csr_matrix fetched_owned;
  csr_view owned = rows.rows;
  if (!everything) {
    if (rows.fetched) {
      fetched_owned = kernels::columns_in_range(exec_, rows.rows, first, last);
      owned = fetched_owned.view();
    } else {
      owned = owned_columns(rows.rows, owned_graph_, first, last);
    }
  }
  const csr_matrix qa = kernels::spgemm(exec_, q_on_rows.view(), pattern_of(owned));
  if (everything) return kernels::add(exec_, qa.view(), q.view());
  const csr_matrix owned_q = kernels::columns_in_range(exec_, q.view(), first, last);
  return kernels::add(exec_, qa.view(), owned_q.view());
}

column_slices layer_wise_sampling::fetch_columns(std::span<const vertex_t> vertices, vertex_t first,
                                                 vertex_t last) {
  executor_stage stage(exec_, times_, device_log_, "fetch_rows");
  return rows_.rows_in_columns(vertices, first, last);
}

csr_matrix layer_wise_sampling::column_weights_from_slices(const segmented_vertices& frontier,
                                                           std::span<const vertex_t> distinct,
                                                           const column_slices& slices,
                                                           vertex_t first, vertex_t last) {
  executor_stage stage(exec_, times_, device_log_, "spgemm");
  const vertex_t n = rows_.num_vertices();
  const csr_matrix q = kernels::frontier_selection(exec_, frontier, distinct, slices.degrees, n);
  // Row k of the slices is the row of distinct[k]: Q renamed to those rows
  // multiplies them in the order column_weights_in_range does whole rows.
  std::vector<vertex_t> row_numbers(distinct.size());
  std::iota(row_numbers.begin(), row_numbers.end(), 0);
  const csr_matrix q_on_rows =
      kernels::rename_columns(exec_, q.view(), distinct, row_numbers, slices.rows.rows);
  const csr_matrix qa = kernels::spgemm(exec_, q_on_rows.view(), pattern_of(slices.rows.view()));
  const csr_matrix owned_q = kernels::columns_in_range(exec_, q.view(), first, last);
  return kernels::add(exec_, qa.view(), owned_q.view());
}

csr_view layer_wise_sampling::global_weights_in_range(vertex_t first, vertex_t last, int slices) {
  // Keyed by the slice count, which every rank of the call shares, so that
  // all of them enter the collective fetch or none does.
  auto& cache = owned_global_weights_;
  if (cache.slices != slices) {
    segmented_vertices everyone;
    everyone.vertices.resize(static_cast<std::size_t>(rows_.num_vertices()));
    std::iota(everyone.vertices.begin(), everyone.vertices.end(), 0);
    everyone.offsets.push_back(rows_.num_vertices());
    const auto all_rows = fetch_columns(everyone.vertices, first, last);
    cache.columns = column_weights_from_slices(everyone, everyone.vertices, all_rows, first, last);
    cache.first = first;
    cache.last = last;
    cache.slices = slices;
  }
  return cache.columns.view();
}

csr_matrix layer_wise_sampling::blocks_from_slices(
    const segmented_vertices& whole, const segmented_vertices& part,
    const segmented_vertices& sources, std::span<const float> inverse_p,
    std::span<const vertex_t> distinct, const column_slices& slices, comm::communicator& ranks) {
  std::vector<detail::block_entry> mine;
  {
    executor_stage stage(exec_, times_, device_log_, "extract");
    mine = detail::block_entries_in_slices(whole, sources, distinct, slices);
  }
  std::vector<detail::block_entry> everyones;
  {
    executor_stage stage(exec_, times_, device_log_, "exchange");
    everyones = ranks.all_gather_v(std::span<const detail::block_entry>(mine));
  }
  executor_stage stage(exec_, times_, device_log_, "extract");
  const auto looped =
      detail::part_rows_from_entries(whole, part, std::move(everyones), rows_.num_vertices());
  segmented_vertices destination_rows;
  destination_rows.vertices.resize(part.vertices.size());
  std::iota(destination_rows.vertices.begin(), destination_rows.vertices.end(), 0);
  destination_rows.offsets = part.offsets;
  return kernels::extract_blocks(exec_, looped.view(), destination_rows, sources, inverse_p, false);
}

csr_matrix layer_wise_sampling::draw_split_rows(csr_view weights,
                                                std::span<const vertex_t> weight_row,
                                                const kernels::row_streams& streams,
                                                std::int64_t fanout, comm::communicator& ranks) {
  // Where this rank's entries of each row start in the whole row: after the
  // entries of the ranks before it (whose columns come first).
  const auto count = static_cast<std::int64_t>(weight_row.size());
  // -1 takes every entry, as sample_rows takes a whole row.
  const std::int64_t take = fanout == -1 ? std::numeric_limits<std::int64_t>::max() : fanout;
  std::vector<std::int64_t> mine(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) mine[i] = weights.degree(weight_row[i]);
  std::vector<std::int64_t> everyone;
  std::vector<kernels::keyed_entry> all;
  {
    executor_stage stage(exec_, times_, device_log_, "exchange");
    everyone = ranks.all_gather(std::span<const std::int64_t>(mine));
  }
  std::vector<std::int64_t> first_position(static_cast<std::size_t>(count), 0);
  for (int r = 0; r < ranks.rank(); ++r)
    for (std::int64_t i = 0; i < count; ++i) first_position[i] += everyone[r * count + i];
  std::vector<kernels::keyed_entry> candidates;
  {
    executor_stage stage(exec_, times_, device_log_, "sample_rows");
    candidates =
        kernels::smallest_keyed_entries(exec_, weights, weight_row, first_position, streams, take);
  }
  {
    executor_stage stage(exec_, times_, device_log_, "exchange");
    all = ranks.all_gather_v(std::span<const kernels::keyed_entry>(candidates));
  }
  executor_stage stage(exec_, times_, device_log_, "sample_rows");
  return kernels::take_smallest_keys(exec_, all, count, weights.cols, take);
}

layer_wise_sampling::split_hop layer_wise_sampling::sample_layer_wise_part(
    const segmented_vertices& whole, const segmented_vertices& part,
    std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch, std::uint32_t hop,
    comm::communicator& ranks) {
  BULKGNN_EXPECTS(exec_.kind() != backend::cuda || ranks.size() == 1,
                  "bulk_sampler: layer-wise sampling split over ranks runs on the host back ends "
                  "only so far");
  const bool global = global_distribution_;
  const vertex_t n = rows_.num_vertices();
  const auto first = static_cast<vertex_t>(std::int64_t{n} * ranks.rank() / ranks.size());
  const auto last = static_cast<vertex_t>(std::int64_t{n} * (ranks.rank() + 1) / ranks.size());
  // A sharded graph's owners may cut the frontier's rows to this rank's
  // columns (on 1.5D the ranks then move one copy of the rows between them,
  // not one each); FastGCN without the whole graph reads its distribution by
  // columns, and its blocks from slices too.
  const bool sliced = rows_.whole_graph() == nullptr && (global || rows_.slices_at_owners());
  BULKGNN_EXPECTS(!sliced || context().excluded == nullptr,
                  "bulk_sampler: layer-wise sampling over a sharded graph whose rows are cut by "
                  "columns does not leave excluded edges out so far (link prediction holds the "
                  "whole graph on every rank)");
  const auto distinct =
      global && !sliced ? buffer<vertex_t>{} : kernels::sorted_distinct(exec_, whole.vertices);
  gathered_rows rows;
  column_slices slices;
  csr_matrix local_weights;
  csr_view weights;
  if (sliced) {
    slices = fetch_columns(distinct, first, last);
    if (global) {
      weights = global_weights_in_range(first, last, ranks.size());
    } else {
      local_weights = column_weights_from_slices(whole, distinct, slices, first, last);
      weights = local_weights.view();
    }
  } else if (global) {
    rows.rows = *rows_.whole_graph();
    weights = owned_columns(global_column_weights_.view(), owned_global_weights_, first, last);
  } else {
    rows = fetch_rows(distinct);
    local_weights = without_excluded(column_weights_in_range(whole, distinct, rows, first, last),
                                     whole, distinct, rows);
    weights = local_weights.view();
  }

  const auto weight_rows = detail::rows_per_minibatch(exec_, minibatch_ids, global);
  const std::span<const vertex_t> weight_row = weight_rows.rows;
  const auto streams = weight_rows.streams(options_.seed, epoch, hop);
  // One rank holds whole rows: its draw is sample_rows', which the split
  // draw reproduces from the ranks' parts.
  csr_matrix drawn;
  if (ranks.size() == 1) {
    executor_stage stage(exec_, times_, device_log_, "sample_rows");
    drawn = kernels::sample_rows(exec_, weights, weight_row, streams,
                                 {.fanout = options_.fanouts[hop],
                                  .mode = kernels::replacement::without,
                                  .weights = kernels::weighting::by_value});
  } else {
    drawn = draw_split_rows(weights, weight_row, streams, options_.fanouts[hop], ranks);
  }

  segmented_vertices sources;
  buffer<float> inverse_p;
  {
    executor_stage stage(exec_, times_, device_log_, "extract");
    sources = detail::frontier_then_drawn(exec_, whole, drawn.view());
    // Each source's p is in the weights of exactly one rank and 0 in the
    // others', so the sum over ranks is exact in any order.
    inverse_p = kernels::lookup_entries(exec_, weights, weight_row, sources);
  }
  {
    executor_stage stage(exec_, times_, device_log_, "exchange");
    ranks.all_reduce(std::span<float>(inverse_p));
  }
  executor_stage stage(exec_, times_, device_log_, "extract");
  kernels::invert_probabilities(exec_, inverse_p);

  csr_matrix blocks =
      sliced ? blocks_from_slices(whole, part, sources, inverse_p, distinct, slices, ranks)
             : detail::extract_layer_blocks(exec_, part, sources, inverse_p, distinct, rows, true);
  drop_excluded(blocks, part, sources);
  kernels::normalize_rows(exec_, blocks);
  // Renumbered as restrict_to_seeds does: the part's destinations first,
  // then the other sources its rows use, in order of first use.
  const auto by_vertex =
      kernels::columns_as_vertices(exec_, blocks.view(), part.offsets, sources, n);
  auto relabelled = kernels::relabel_by_segment(exec_, part, by_vertex.view());
  return {{std::move(relabelled.sources), std::move(relabelled.blocks), part.offsets},
          std::move(sources)};
}

// The two layer-wise samplers differ only in their distribution.
class ladies_sampling final : public layer_wise_sampling {
 public:
  explicit ladies_sampling(sampling_context& context) : layer_wise_sampling(context, false) {}
};

class fastgcn_sampling final : public layer_wise_sampling {
 public:
  explicit fastgcn_sampling(sampling_context& context) : layer_wise_sampling(context, true) {}
};

}  // namespace

sampler_entry ladies_entry() {
  return {.name = "ladies",
          .summary =
              "layer-wise (LADIES): fanouts[l] vertices per minibatch, drawn by the "
              "frontier's importance, GCN layers over the sampler's weights",
          .fanout = fanout_unit::per_minibatch,
          .layer = "gcn",
          .cost_family = "ladies",
          .make = make_sampling<ladies_sampling>};
}

sampler_entry fastgcn_entry() {
  return {.name = "fastgcn",
          .summary =
              "layer-wise (FastGCN): fanouts[l] vertices per minibatch from one global "
              "distribution, GCN layers over the sampler's weights",
          .fanout = fanout_unit::per_minibatch,
          .layer = "gcn",
          .cost_family = "fastgcn",
          .make = make_sampling<fastgcn_sampling>};
}

}  // namespace bulkgnn::sampler
