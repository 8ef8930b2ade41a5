// 3D grid (--grid 3d --replication c): P = c·q² ranks, c layers of q×q.
//
// Layout. Sampling rank ℓq² + iq + j is (layer ℓ, process row i, process
// column j). The partition has F = c·q parts; part ℓq + i is process row i of
// layer ℓ, so layer ℓ holds the rows of A in parts ℓq .. ℓq + q - 1 (slice ℓ
// of the inner dimension of S·A). Columns are split into q blocks, block j
// being parts jc .. jc + c - 1 (contiguous new ids). Rank (ℓ, i, j) holds the
// rows of part ℓq + i restricted to column block j, each entry with its
// column (original id), its slot (position within A's row) and its weight.
// For the row-selection S of S·A only the layer holding row v contributes
// to product row v, so the reduction over layers is a routing: nothing is
// added, every product row comes whole from one layer.
//
// Communication per rows() call at rank r = (ℓ, i, j), fiber index
// f = ℓq + i; each all-to-all also moves a 4-byte count per pair of distinct
// ranks each way (comm/communicator.hpp), written 4(F-1) or 4(q-1) below:
//  1. requests, fiber all-to-all (the F ranks of process column j): each
//     distinct requested vertex v goes to part owner(v), 4 bytes; sent
//     4(F-1) + 4·(distinct requests owned by other parts).
//  2. request lists, process-row all-to-all: the list L_j of vertices rank r
//     received in step 1 goes to the q-1 others of its process row;
//     sent (q-1)(4 + 4|L_j|).
//  3. pieces, process-row all-to-all: for each other member j' and each v in
//     L_j', the entries of row v in column block j: 4 (count) + 8 per entry
//     (column, slot); sent Σ_{j'≠j} (4 + 4|L_j'| + 8·nnz_j(L_j')). Weighted
//     graphs add a second all-to-all of 4 bytes per entry:
//     Σ_{j'≠j} (4 + 4·nnz_j(L_j')).
//  4. complete rows, fiber all-to-all back to the requesters: 4 (length) +
//     4 per entry (column); sent Σ_{s≠f} (4 + 4|L_j from s| + 4·nnz(L_j from
//     s)); weighted graphs add Σ_{s≠f} (4 + 4·nnz(L_j from s)).
// Summed over ranks (total sent = total received), with D the distinct
// requests summed over requesters and E the entries of their rows, and the
// owners of requests and the column blocks of entries spread evenly:
//   8P(F-1) + 8P(q-1) + D·(8(1 - 1/F) + 8(q-1)) + E·(8(1 - 1/q) + 4(1 - 1/F))
//   + weighted·(4P(F-1) + 4P(q-1) + E·(4(1 - 1/q) + 4(1 - 1/F))).
// (Checked against the traffic log, 100k vertices, 765k entries, 2000
// requests per rank: P = 8, c = 2: 1,078,277 by the formula, 1,080,213
// counted; P = 4, c = 1: 461,950 and 462,277.)
//
// Draws at the owner (draw_rows) change steps 1 and 4: a request per
// frontier row of each minibatch, (vertex, minibatch) = 8 bytes, goes out;
// the completing rank completes each requester's distinct rows (steps 2-3
// unchanged), draws them with the requester's keys, and sends back only the
// drawn rows: 4 (length) + 4 per drawn entry (+ 4 per weight). With one
// column block (q = 1) a rank holds its rows whole and steps 2-3 vanish.
// cost_model.hpp's three_d_draw_bytes sums this over ranks.

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/distributed/sharded_rows.hpp"
#include "row_pieces.hpp"

#include "bulkgnn/kernels/gather_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace bulkgnn::distributed {

struct layered_grid_shards::local_block {
  detail::row_block rows;  // rows of this rank's part, in local_index order

  // With one column block (q = 1) the rows are whole, in A's stored order.
  [[nodiscard]] csr_view whole_rows(std::int64_t num_vertices) const {
    return {static_cast<std::int64_t>(rows.indptr.size()) - 1,
            num_vertices,
            rows.indptr,
            rows.columns,
            rows.weights,
            memory_space::host};
  }
};

namespace {
int layer_side(int ranks, int layers) {
  return static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks / layers))));
}
}  // namespace

layered_grid_shards::layered_grid_shards(const comm::communicator& sampling,
                                         const vertex_partition& partition, int layers,
                                         draw_location draw_at, vertex_t num_vertices,
                                         bool weighted)
    : fiber_(sampling.split(sampling.rank() % layer_side(sampling.size(), layers),
                            sampling.rank() / layer_side(sampling.size(), layers),
                            sampling.stage())),
      process_row_(sampling.split(sampling.rank() / layer_side(sampling.size(), layers),
                                  sampling.rank() % layer_side(sampling.size(), layers),
                                  sampling.stage())),
      partition_(partition),
      num_vertices_(num_vertices),
      weighted_(weighted),
      draw_at_(draw_at),
      block_(std::make_unique<local_block>()) {
  BULKGNN_EXPECTS(partition.parts == fiber_->size(),
                  "3d: the partition has {} parts for {} layers of {} process rows",
                  partition.parts, layers, process_row_->size());
}

layered_grid_shards::layered_grid_shards(const comm::communicator& sampling, csr_view graph,
                                         const vertex_partition& partition, int layers,
                                         draw_location draw_at)
    : layered_grid_shards(sampling, partition, layers, draw_at, static_cast<vertex_t>(graph.rows),
                          graph.weighted()) {
  hold_column_block(graph, layers, [&](std::int64_t id) { return partition.old_id[id]; });
}

layered_grid_shards::layered_grid_shards(const comm::communicator& sampling, part_rows mine,
                                         const vertex_partition& partition, int layers,
                                         draw_location draw_at)
    : layered_grid_shards(sampling, partition, layers, draw_at,
                          static_cast<vertex_t>(mine.rows.cols), mine.weighted) {
  BULKGNN_EXPECTS(mine.rows.rows == partition.part_size(fiber_->rank()),
                  "3d: {} rows given for part {} of {} vertices", mine.rows.rows, fiber_->rank(),
                  partition.part_size(fiber_->rank()));
  const auto first = partition.part_offsets[fiber_->rank()];
  hold_column_block(mine.rows, layers, [&](std::int64_t id) { return id - first; });
}

template <class SourceRow>
void layered_grid_shards::hold_column_block(csr_view source, int layers, SourceRow source_row) {
  const auto& partition = partition_;
  const int part = fiber_->rank();
  const int column_block = process_row_->rank();
  for (auto id = partition.part_offsets[part]; id < partition.part_offsets[part + 1]; ++id)
    block_->rows.push_row(source, source_row(id), [&](vertex_t column) {
      return partition.owner[column] / layers == column_block;
    });
}

layered_grid_shards::~layered_grid_shards() = default;

sampler::gathered_rows layered_grid_shards::rows(std::span<const vertex_t> vertices) {
  const auto distinct = detail::distinct_vertices(vertices);
  std::vector<std::vector<vertex_t>> requests(fiber_->size());
  for (const vertex_t v : distinct) {
    BULKGNN_EXPECTS(v >= 0 && v < num_vertices_, "3d: vertex {} outside the graph", v);
    requests[partition_.owner[v]].push_back(v);
  }
  const auto asked = fiber_->all_to_all(requests);

  // The rows this rank completes, one per request it received.
  std::vector<vertex_t> to_complete;
  for (const auto& from_requester : asked)
    to_complete.insert(to_complete.end(), from_requester.begin(), from_requester.end());
  const csr_matrix completed = complete_rows(to_complete);

  std::vector<detail::piece_stream> replies(fiber_->size());
  std::int64_t next_completed = 0;
  for (int requester = 0; requester < fiber_->size(); ++requester)
    for (std::size_t k = 0; k < asked[requester].size(); ++k)
      detail::write_row(completed.view(), next_completed++, replies[requester]);
  const auto answered = detail::exchange(*fiber_, std::move(replies), weighted_);

  return detail::rows_from_owners(answered, partition_.owner, num_vertices_, distinct, vertices);
}

sampler::column_slices layered_grid_shards::rows_in_columns(std::span<const vertex_t> vertices,
                                                            vertex_t first, vertex_t last) {
  if (!slices_at_owners()) return row_source::rows_in_columns(vertices, first, last);
  const auto asked = detail::exchange_ids(
      *fiber_,
      detail::route_sliced_requests(vertices, partition_.owner, fiber_->size(), first, last, "3d"));
  std::vector<vertex_t> to_complete;
  for (const auto& from_requester : asked) {
    const auto wanted = detail::sliced_request_vertices(from_requester);
    to_complete.insert(to_complete.end(), wanted.begin(), wanted.end());
  }
  const csr_matrix completed = complete_rows(to_complete);
  std::vector<std::vector<vertex_t>> replies(asked.size());
  std::vector<vertex_t> rows_of_requester;
  vertex_t next_completed = 0;
  for (std::size_t r = 0; r < asked.size(); ++r) {
    rows_of_requester.resize(asked[r].size() - 2);
    std::iota(rows_of_requester.begin(), rows_of_requester.end(), next_completed);
    next_completed += static_cast<vertex_t>(rows_of_requester.size());
    replies[r] = detail::write_sliced_rows(completed.view(), rows_of_requester, asked[r], "3d");
  }
  return detail::slices_from_owners(detail::exchange_ids(*fiber_, std::move(replies)),
                                    partition_.owner, vertices, num_vertices_);
}

csr_matrix layered_grid_shards::complete_rows(const std::vector<vertex_t>& to_complete) {
  if (process_row_->size() == 1) {
    std::vector<vertex_t> local;
    local.reserve(to_complete.size());
    for (const vertex_t v : to_complete) local.push_back(partition_.local_index[v]);
    return kernels::gather_rows({}, block_->whole_rows(num_vertices_), local);
  }
  // Every process-row member gets the list, so that each contributes its
  // column block of those rows.
  const auto lists = process_row_->all_to_all(
      std::vector<std::vector<vertex_t>>(process_row_->size(), to_complete));

  std::vector<detail::piece_stream> pieces(process_row_->size());
  for (int member = 0; member < process_row_->size(); ++member)
    for (const vertex_t v : lists[member])
      block_->rows.write_piece(partition_.local_index[v], pieces[member]);
  const auto received_pieces = detail::exchange(*process_row_, std::move(pieces), weighted_);

  csr_matrix completed;
  completed.cols = num_vertices_;
  detail::piece_reader from_members(received_pieces.entries, received_pieces.weights);
  for (std::size_t k = 0; k < to_complete.size(); ++k) from_members.append_next_row(completed);
  return completed;
}

csr_matrix layered_grid_shards::draw_rows(const executor& exec, std::span<const vertex_t> vertices,
                                          const kernels::row_streams& streams,
                                          const kernels::row_sampling_options& draw) {
  // Whole rows are what every request would return anyway.
  if (draw_at_ == draw_location::requester || draw.fanout < 0)
    return row_source::draw_rows(exec, vertices, streams, draw);
  // One column block: this rank holds its rows whole and draws in place.
  if (process_row_->size() == 1)
    return detail::draw_at_owners(*fiber_, exec, block_->whole_rows(num_vertices_),
                                  partition_.owner, partition_.local_index, vertices, streams, draw,
                                  weighted_, "3d");
  auto routed =
      detail::route_draw_requests(vertices, streams, partition_.owner, fiber_->size(), "3d");
  const auto asked = detail::exchange_ids(*fiber_, std::move(routed.pairs));

  // Each requester's distinct vertices are completed once, however many of
  // its minibatches draw from them; then every request draws from its row.
  std::vector<vertex_t> to_complete;
  std::vector<vertex_t> completed_row;
  for (const auto& pairs : asked) {
    std::vector<vertex_t> requested;
    for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) requested.push_back(pairs[k]);
    const auto distinct = detail::distinct_vertices(requested);
    const auto first = static_cast<vertex_t>(to_complete.size());
    for (const vertex_t v : requested)
      completed_row.push_back(
          first + static_cast<vertex_t>(std::lower_bound(distinct.begin(), distinct.end(), v) -
                                        distinct.begin()));
    to_complete.insert(to_complete.end(), distinct.begin(), distinct.end());
  }
  const csr_matrix completed = complete_rows(to_complete);
  const auto mine =
      detail::draw_requested_rows(exec, completed.view(), completed_row, asked, streams, draw);
  const auto answered =
      detail::exchange(*fiber_, detail::drawn_replies(mine.drawn, mine.first), weighted_);
  return detail::drawn_rows_from_owners(answered, routed.owner_of, num_vertices_);
}

}  // namespace bulkgnn::distributed
