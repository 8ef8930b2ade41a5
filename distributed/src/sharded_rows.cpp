#include "bulkgnn/distributed/sharded_rows.hpp"

#include "grid_sources.hpp"
#include "row_pieces.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"

#include <cmath>

namespace bulkgnn::distributed {

draw_location parse_draw_location(const std::string& name) {
  if (name == "owner") return draw_location::owner;
  if (name == "requester") return draw_location::requester;
  throw option_error("cluster_options.draw_at must be owner or requester; got '" + name + "'");
}

std::string draw_location_name(draw_location where) {
  return where == draw_location::owner ? "owner" : "requester";
}

grid_kind parse_grid_kind(const std::string& name) {
  if (name == "replicated") return grid_kind::replicated;
  if (name == "1.5d") return grid_kind::one_and_half_d;
  if (name == "2d") return grid_kind::two_d;
  if (name == "2d-summa") return grid_kind::two_d_summa;
  if (name == "3d") return grid_kind::three_d;
  throw option_error("cluster_options.grid must be replicated, 1.5d, 2d, 2d-summa or 3d; got '" +
                     name + "'");
}

std::string grid_kind_name(grid_kind kind) {
  switch (kind) {
    case grid_kind::replicated:
      return "replicated";
    case grid_kind::one_and_half_d:
      return "1.5d";
    case grid_kind::two_d:
      return "2d";
    case grid_kind::two_d_summa:
      return "2d-summa";
    case grid_kind::three_d:
      return "3d";
  }
  return "unknown";
}

namespace {
bool is_square(int n) {
  const int root = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
  return root * root == n;
}
}  // namespace

void validate_grid(grid_kind kind, int ranks, int replication) {
  BULKGNN_EXPECTS(replication >= 1, "cluster_options.replication must be at least 1, got {}",
                  replication);
  switch (kind) {
    case grid_kind::replicated:
      BULKGNN_EXPECTS(replication == 1,
                      "cluster_options.replication applies to the 1.5d and 3d grids only");
      return;
    case grid_kind::one_and_half_d:
      BULKGNN_EXPECTS(
          ranks % replication == 0,
          "cluster_options.grid 1.5d: cluster_options.replication {} must divide the {} ranks",
          replication, ranks);
      return;
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
      BULKGNN_EXPECTS(replication == 1,
                      "cluster_options.grid {} takes no cluster_options.replication (use 3d for "
                      "layers)",
                      grid_kind_name(kind));
      BULKGNN_EXPECTS(is_square(ranks),
                      "cluster_options.grid {} needs a square number of ranks, got {}",
                      grid_kind_name(kind), ranks);
      return;
    case grid_kind::three_d:
      BULKGNN_EXPECTS(ranks % replication == 0 && is_square(ranks / replication),
                      "cluster_options.grid 3d: cluster_options.replication {} (layers) must "
                      "divide the {} ranks into square "
                      "layers",
                      replication, ranks);
      return;
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

std::unique_ptr<sampler::row_source> make_row_source(grid_kind kind,
                                                     const comm::communicator& sampling,
                                                     csr_view graph,
                                                     const vertex_partition& partition,
                                                     int replication, draw_location draw_at) {
  validate_grid(kind, sampling.size(), replication);
  switch (kind) {
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
          "cluster_options.grid 2d-summa is not available in this build (it needs CombBLAS)");
#endif
    case grid_kind::three_d:
      return std::make_unique<layered_grid_shards>(sampling, graph, partition, replication,
                                                   draw_at);
  }
  throw option_error("cluster_options.grid " + grid_kind_name(kind) +
                     " is not available in this build");
}

std::unique_ptr<sampler::row_source> make_row_source(grid_kind kind,
                                                     const comm::communicator& sampling,
                                                     part_rows mine,
                                                     const vertex_partition& partition,
                                                     int replication, draw_location draw_at) {
  validate_grid(kind, sampling.size(), replication);
  switch (kind) {
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
    case grid_kind::two_d_summa:
      break;
  }
  throw option_error("cluster_options.grid " + grid_kind_name(kind) +
                     " reads the whole graph (CombBLAS), not a partitioned dataset's part");
}

int part_of_rank(grid_kind kind, int ranks, int replication, int rank) {
  switch (kind) {
    case grid_kind::replicated:
      return 0;
    case grid_kind::one_and_half_d:
      return rank % (ranks / replication);
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
    case grid_kind::three_d: {
      const int side =
          static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks / replication))));
      return rank / side;
    }
  }
  return 0;
}

}  // namespace bulkgnn::distributed
