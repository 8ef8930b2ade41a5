#include "bulkgnn/distributed/sharded_rows.hpp"

#include "grid_sources.hpp"
#include "row_pieces.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"

namespace bulkgnn::distributed {

draw_location parse_draw_location(const std::string& name) {
  if (name == "owner") return draw_location::owner;
  if (name == "requester") return draw_location::requester;
  throw option_error("cluster_options.draw_at must be owner or requester; got '" + name + "'");
}

std::string draw_location_name(draw_location where) {
  return where == draw_location::owner ? "owner" : "requester";
}

rank_grid minibatch_grid(grid_kind kind, int ranks, int replication) {
  require_grid_kind_in(kind, minibatch_grids, "minibatch sampling");
  return {kind, ranks, replication};
}

int grid_partition_parts(const rank_grid& grid) {
  switch (grid.kind()) {
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
    case grid_kind::three_d:
      return grid.layers() * grid.rows();
    default:
      return grid.rows();
  }
}

int part_of_rank(const rank_grid& grid, int rank) {
  const auto at = grid.position_of(rank);
  switch (grid.kind()) {
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
    case grid_kind::three_d:
      return at.layer * grid.rows() + at.row;
    default:
      return at.row;
  }
}

block_row_shards::block_row_shards(const comm::communicator& sampling,
                                   const vertex_partition& partition, int replication,
                                   draw_location draw_at, vertex_t num_vertices, bool weighted)
    : team_(sampling.split(sampling.rank() / (sampling.size() / replication),
                           sampling.rank() % (sampling.size() / replication), sampling.stage())),
      partition_(partition),
      num_vertices_(num_vertices),
      weighted_(weighted),
      draw_at_(draw_at) {
  BULKGNN_EXPECTS(partition.parts == team_->size(),
                  "1.5d: the partition has {} parts for teams of {} ranks", partition.parts,
                  team_->size());
}

block_row_shards::block_row_shards(const comm::communicator& sampling, csr_view graph,
                                   const vertex_partition& partition, int replication,
                                   draw_location draw_at)
    : block_row_shards(sampling, partition, replication, draw_at, static_cast<vertex_t>(graph.rows),
                       graph.weighted()) {
  const int part = team_->rank();
  const auto first = partition.part_offsets[part];
  std::vector<vertex_t> mine(partition.old_id.begin() + first,
                             partition.old_id.begin() + partition.part_offsets[part + 1]);
  copied_block_ = kernels::gather_rows({}, graph, mine);
  block_ = copied_block_.view();
}

block_row_shards::block_row_shards(const comm::communicator& sampling, part_rows mine,
                                   const vertex_partition& partition, int replication,
                                   draw_location draw_at)
    : block_row_shards(sampling, partition, replication, draw_at,
                       static_cast<vertex_t>(mine.rows.cols), mine.weighted) {
  BULKGNN_EXPECTS(mine.rows.rows == partition.part_size(team_->rank()),
                  "1.5d: {} rows given for part {} of {} vertices", mine.rows.rows, team_->rank(),
                  partition.part_size(team_->rank()));
  block_ = mine.rows;
}

sampler::gathered_rows block_row_shards::rows(std::span<const vertex_t> vertices) {
  const int members = team_->size();
  const auto distinct = detail::distinct_vertices(vertices);
  std::vector<std::vector<vertex_t>> requests(members);
  for (const vertex_t v : distinct) {
    BULKGNN_EXPECTS(v >= 0 && v < num_vertices_, "1.5d: vertex {} outside the graph", v);
    requests[partition_.owner[v]].push_back(v);
  }
  const auto asked = team_->all_to_all(requests);

  std::vector<detail::piece_stream> replies(members);
  for (int r = 0; r < members; ++r)
    for (const vertex_t v : asked[r])
      detail::write_row(block_, partition_.local_index[v], replies[r]);
  const auto answered = detail::exchange(*team_, std::move(replies), weighted_);

  return detail::rows_from_owners(answered, partition_.owner, num_vertices_, distinct, vertices);
}

csr_matrix block_row_shards::draw_rows(const executor& exec, std::span<const vertex_t> vertices,
                                       const kernels::row_streams& streams,
                                       const kernels::row_sampling_options& draw) {
  // Whole rows are what every request would return anyway.
  if (draw_at_ == draw_location::requester || draw.fanout < 0)
    return row_source::draw_rows(exec, vertices, streams, draw);
  return detail::draw_at_owners(*team_, exec, block_, partition_.owner, partition_.local_index,
                                vertices, streams, draw, weighted_, "1.5d");
}

sampler::column_slices block_row_shards::rows_in_columns(std::span<const vertex_t> vertices,
                                                         vertex_t first, vertex_t last) {
  if (!slices_at_owners()) return row_source::rows_in_columns(vertices, first, last);
  const auto asked = detail::exchange_ids(
      *team_, detail::route_sliced_requests(vertices, partition_.owner, team_->size(), first, last,
                                            "1.5d"));
  std::vector<std::vector<vertex_t>> replies(asked.size());
  for (std::size_t r = 0; r < asked.size(); ++r) {
    std::vector<vertex_t> local_rows;
    for (const vertex_t v : detail::sliced_request_vertices(asked[r]))
      local_rows.push_back(partition_.local_index[v]);
    replies[r] = detail::write_sliced_rows(block_, local_rows, asked[r], "1.5d");
  }
  return detail::slices_from_owners(detail::exchange_ids(*team_, std::move(replies)),
                                    partition_.owner, vertices, num_vertices_);
}

std::unique_ptr<sampler::row_source> make_row_source(const rank_grid& grid,
                                                     const comm::communicator& sampling,
                                                     csr_view graph,
                                                     const vertex_partition& partition,
                                                     draw_location draw_at) {
  BULKGNN_ASSERT(grid.ranks() == sampling.size());
  require_grid_kind_in(grid.kind(), minibatch_grids, "minibatch sampling");
  const int replication = grid.replication();
  switch (grid.kind()) {
    case grid_kind::replicated:
      return std::make_unique<sampler::local_rows>(graph);
    case grid_kind::one_and_half_d:
      return std::make_unique<block_row_shards>(sampling, graph, partition, replication, draw_at);
    case grid_kind::two_d:
      return std::make_unique<layered_grid_shards>(sampling, graph, partition, 1, draw_at);
    case grid_kind::two_d_summa:
#ifdef BULKGNN_HAVE_COMBBLAS
      return detail::make_combblas_grid_rows(sampling, graph, partition);
#else
      throw option_error(
          "layout_options.grid 2d-summa is not available in this build (it needs CombBLAS)");
#endif
    case grid_kind::three_d:
      return std::make_unique<layered_grid_shards>(sampling, graph, partition, replication,
                                                   draw_at);
    default:
      break;
  }
  throw option_error("layout_options.grid " + grid_kind_name(grid.kind()) +
                     " is not available in this build");
}

std::unique_ptr<sampler::row_source> make_row_source(const rank_grid& grid,
                                                     const comm::communicator& sampling,
                                                     part_rows mine,
                                                     const vertex_partition& partition,
                                                     draw_location draw_at) {
  BULKGNN_ASSERT(grid.ranks() == sampling.size());
  require_grid_kind_in(grid.kind(), minibatch_grids, "minibatch sampling");
  const int replication = grid.replication();
  switch (grid.kind()) {
    case grid_kind::replicated:
      BULKGNN_EXPECTS(partition.parts == 1, "replicated: the partition has {} parts, not 1",
                      partition.parts);
      return std::make_unique<sampler::local_rows>(mine.rows);
    case grid_kind::one_and_half_d:
      return std::make_unique<block_row_shards>(sampling, mine, partition, replication, draw_at);
    case grid_kind::two_d:
      return std::make_unique<layered_grid_shards>(sampling, mine, partition, 1, draw_at);
    case grid_kind::three_d:
      return std::make_unique<layered_grid_shards>(sampling, mine, partition, replication, draw_at);
    default:
      break;
  }
  throw option_error("layout_options.grid " + grid_kind_name(grid.kind()) +
                     " reads the whole graph (CombBLAS), not a partitioned dataset's part");
}

}  // namespace bulkgnn::distributed
