// sample_slices: each data-parallel rank samples only its part of every
// minibatch. Node-wise draws are keyed per (minibatch, vertex), so a slice of
// the seeds samples exactly its part. Layer-wise draws depend on the whole
// frontier, so the ranks share the work of one hop by columns instead: each
// computes the columns [n·r/P, n·(r+1)/P) of the sampling distribution (every
// entry summed in the same order as the whole product, so bit-identical),
// draws the keys of its entries at their positions in the whole row's random
// stream, and the fanout smallest keys of all ranks' candidates are the whole
// row's draw. Every rank then knows the hop's sources; it extracts only the
// block rows its part reaches, renumbered as restrict_to_seeds numbers them.
// On a sharded graph whose owners cut rows (row_source::slices_at_owners),
// and for FastGCN on any sharded graph, a rank reads only its columns of the
// frontier's rows; the block entries, found among each rank's columns, are
// then gathered by every rank (sliced_blocks.cpp).
#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "hop_helpers.hpp"
#include "sliced_blocks.hpp"

#include <limits>
#include <numeric>

namespace bulkgnn::sampler {

namespace {

using detail::pattern_of;
using detail::stream_ids;

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
  if (options_.kind == sampler_kind::node_wise) return sample(plan.epoch(), std::move(part), ids);
  BULKGNN_EXPECTS(exec_.kind() != backend::cuda,
                  "bulk_sampler::sample_slices: layer-wise sampling split over ranks runs on the "
                  "host back ends only so far");

  return sample_layer_wise_parts(plan.epoch(), std::move(whole), std::move(part), ids, split.ranks);
}

bulk_sample bulk_sampler::sample_layer_wise_parts(std::uint32_t epoch, segmented_vertices whole,
                                                  segmented_vertices part,
                                                  std::span<const std::int64_t> minibatch_ids,
                                                  comm::communicator* ranks) {
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

csr_view bulk_sampler::owned_columns(csr_view whole, column_slice& cache, vertex_t first,
                                     vertex_t last) {
  if (first == 0 && last == whole.cols) return whole;
  if (cache.first != first || cache.last != last) {
    cache.columns = kernels::columns_in_range(exec_, whole, first, last);
    cache.first = first;
    cache.last = last;
  }
  return cache.columns.view();
}

csr_matrix bulk_sampler::column_weights_in_range(const segmented_vertices& frontier,
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

column_slices bulk_sampler::fetch_columns(std::span<const vertex_t> vertices, vertex_t first,
                                          vertex_t last) {
  executor_stage stage(exec_, times_, device_log_, "fetch_rows");
  return rows_.rows_in_columns(vertices, first, last);
}

csr_matrix bulk_sampler::column_weights_from_slices(const segmented_vertices& frontier,
                                                    std::span<const vertex_t> distinct,
                                                    const column_slices& slices, vertex_t first,
                                                    vertex_t last) {
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

csr_view bulk_sampler::global_weights_in_range(vertex_t first, vertex_t last, int slices) {
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

csr_matrix bulk_sampler::blocks_from_slices(
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

csr_matrix bulk_sampler::draw_split_rows(csr_view weights, std::span<const vertex_t> weight_row,
                                         const kernels::row_streams& streams, std::int64_t fanout,
                                         comm::communicator& ranks) {
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

bulk_sampler::split_hop bulk_sampler::sample_layer_wise_part(
    const segmented_vertices& whole, const segmented_vertices& part,
    std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch, std::uint32_t hop,
    comm::communicator& ranks) {
  BULKGNN_EXPECTS(exec_.kind() != backend::cuda || ranks.size() == 1,
                  "bulk_sampler: layer-wise sampling split over ranks runs on the host back ends "
                  "only so far");
  const std::int64_t count = whole.segments();
  const bool global = options_.kind == sampler_kind::fastgcn;
  const vertex_t n = rows_.num_vertices();
  const auto first = static_cast<vertex_t>(std::int64_t{n} * ranks.rank() / ranks.size());
  const auto last = static_cast<vertex_t>(std::int64_t{n} * (ranks.rank() + 1) / ranks.size());
  // A sharded graph's owners may cut the frontier's rows to this rank's
  // columns (on 1.5D the ranks then move one copy of the rows between them,
  // not one each); FastGCN without the whole graph reads its distribution by
  // columns, and its blocks from slices too.
  const bool sliced = rows_.whole_graph() == nullptr && (global || rows_.slices_at_owners());
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
    local_weights = column_weights_in_range(whole, distinct, rows, first, last);
    weights = local_weights.view();
  }

  std::vector<vertex_t> row_numbers(count, 0);
  if (!global) std::iota(row_numbers.begin(), row_numbers.end(), 0);
  const auto weight_row = on_executor(std::span<const vertex_t>(row_numbers));
  const auto minibatch_of_row =
      on_executor(std::span<const std::uint32_t>(stream_ids(minibatch_ids)));
  const auto zero_key_rows =
      on_executor(std::span<const vertex_t>(std::vector<vertex_t>(count, 0)));
  const kernels::row_streams streams{options_.seed, epoch, hop, minibatch_of_row, zero_key_rows};
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
    const auto spread = kernels::spread_to_segment_starts(exec_, drawn.view(), whole.offsets);
    sources = kernels::relabel_by_segment(exec_, whole, spread.view()).sources;
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
             : extract_layer_blocks(part, sources, inverse_p, distinct, rows);
  kernels::normalize_rows(exec_, blocks);
  // Renumbered as restrict_to_seeds does: the part's destinations first,
  // then the other sources its rows use, in order of first use.
  const auto by_vertex =
      kernels::columns_as_vertices(exec_, blocks.view(), part.offsets, sources, n);
  auto relabelled = kernels::relabel_by_segment(exec_, part, by_vertex.view());
  return {{std::move(relabelled.sources), std::move(relabelled.blocks), part.offsets},
          std::move(sources)};
}

}  // namespace bulkgnn::sampler
