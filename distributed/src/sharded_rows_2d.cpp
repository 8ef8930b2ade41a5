// 2D grid on CombBLAS (--grid 2d): P = q² ranks, a q×q CommGrid over the
// sampling communicator; sampling rank iq + j is process (i, j).
//
// Layout. The partition has q parts; part i is block row i and block column
// i. CombBLAS splits an N×N matrix into uniform blocks of N/q, so vertex v
// gets grid id owner(v)·stride + local_index(v) with stride = the largest
// part and N = q·stride: block i of CombBLAS is then exactly part i (padding
// ids hold nothing). Rank (i, j) holds A(part i, part j) as a DCSC block of
// entries {slot, weight}: slot is the entry's position within A's row, so
// the row can be put back in A's stored order.
//
// A call. Requester (i, j) has k distinct vertices. Its requests are rows
// i·R + o .. i·R + o + k - 1 of the selection matrix S (R = the most
// requests of any process row, o = the requests of the ranks before it in
// its process row), each with a single 1 in the column of its vertex. Then
// C = S·A by SUMMA (Mult_AnXBn_Synch, a semiring that copies A's entry), and
// row ρ of C lies in process row i, split over its q column blocks; rank
// (i, j') sends its piece of each row to the requester, who puts the entries
// at their slots.
//
// Bytes per call at rank (i, j), each way unless said (all-to-alls also move
// a 4-byte count per pair of distinct ranks each way, comm/communicator.hpp):
//  1. request counts, all-gather of 8 bytes over all P ranks: 8(P-1).
//  2. S entries, process-row all-to-all: (slot in the request list, vertex)
//     = 8 bytes per distinct request, to the rank holding its column block:
//     4(q-1) + 8·(requests for other column blocks).
//  3. S block sizes, all-gather of 8 bytes over the process row: 8(q-1).
//  4. SUMMA (CombBLAS's own MPI calls, counted here from the block sizes; the
//     sizes are exact, the broadcasts counted as a flat tree: the root sends
//     its block to each of the q-1 others, each receives it once):
//     - each of q stages broadcasts S(i, k) along process row i and A(k, j)
//       along process column j. A block of z entries in c non-empty columns
//       travels as DCSC arrays cp, jc, ir of 8-byte indices and z values:
//       bytes(z, c, b) = z > 0 ? 8(2c + 1 + z) + b·z : 0, with b = 1 (bool)
//       for S and b = 8 ({slot, weight}) for A. Rank (i, j) sends
//       (q-1)(bytes(S_ij) + bytes(A_ij)) and receives Σ_{k≠j} bytes(S_ik) +
//       Σ_{k≠i} bytes(A_kj).
//     - sizes first: 4 all-gathers of 8 bytes along the process row and 4
//       along the process column: 64(q-1); the dimension check: 2 all-reduces
//       of 8 bytes over q ranks: 32(q-1)/q.
//     (Not counted: a barrier and the communicators CombBLAS duplicates for
//     the product's grid on every multiplication.)
//  5. pieces, process-row all-to-all back to the requesters: per requested
//     row of another member a count (4) and 8 bytes per entry in this block
//     (column, slot); weighted graphs add 4 + 4 per entry in a second one.
// Summed over ranks with D distinct requests over all requesters, E the
// entries of their rows, the requests' vertices and the entries' columns
// spread evenly over the blocks, n_S(i, k) the requests of process row i in
// column block k and c_S their distinct vertices, and nnz(A), n_c(A) the
// entries and non-empty block columns of A summed over blocks:
//   8P(P-1) + 4P(q-1) + 8D(1 - 1/q) + 8P(q-1)            (steps 1-3)
//   + (q-1)·Σ_{blocks with n_S > 0} [8(2c_S + 1) + 9n_S]
//   + (q-1)(16 n_c(A) + 8P + 16 nnz(A))                  (no empty A block)
//   + 64P(q-1) + 32q(q-1)                                (step 4)
//   + 4P(q-1) + 4D(q-1) + 8E(1 - 1/q)                    (step 5)
//   + weighted·(4P(q-1) + 4E(1 - 1/q)).
// The A term does not depend on the request: SUMMA broadcasts every block of
// A along its process column in every call, (q-1)(16 nnz(A) + 16 n_c(A))
// bytes in all, which dominates unless the requests cover most of A (P = 4,
// 765k entries, 2000 requests per rank: 15.9 MB counted per call, about 15.4 MB of
// it A's blocks).

#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "grid_sources.hpp"
#include "row_pieces.hpp"

#include <CombBLAS/CombBLAS.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace bulkgnn::distributed::detail {
namespace {

// An entry of A as CombBLAS carries it.
struct adjacency_entry {
  std::int32_t slot = 0;  // position within A's row
  float weight = 1;
};

// S·A over this semiring copies A's entries: each row of S holds a single 1,
// so every entry of the product is exactly one product term and add() never
// has two to combine.
struct select_rows_semiring {
  static adjacency_entry id() { return {}; }
  static bool returnedSAID() { return false; }
  static adjacency_entry add(const adjacency_entry&, const adjacency_entry& term) { return term; }
  static adjacency_entry multiply(const bool&, const adjacency_entry& a) { return a; }
};

using grid_index = std::int64_t;
using selection_block = combblas::SpDCCols<grid_index, bool>;
using adjacency_block = combblas::SpDCCols<grid_index, adjacency_entry>;
using selection_matrix = combblas::SpParMat<grid_index, bool, selection_block>;
using adjacency_matrix = combblas::SpParMat<grid_index, adjacency_entry, adjacency_block>;

template <class Value>
using block_tuples = std::vector<std::tuple<grid_index, grid_index, Value>>;

// A local block from (row, column, value) tuples in any order.
template <class Value>
combblas::SpDCCols<grid_index, Value>* make_block(const block_tuples<Value>& tuples,
                                                  grid_index rows, grid_index cols) {
  // SpTuples takes ownership of an array from new[] (and ignores it when empty).
  std::tuple<grid_index, grid_index, Value>* owned = nullptr;
  if (!tuples.empty()) {
    owned = new std::tuple<grid_index, grid_index, Value>[tuples.size()];
    std::copy(tuples.begin(), tuples.end(), owned);
  }
  const combblas::SpTuples<grid_index, Value> sorted(static_cast<std::int64_t>(tuples.size()), rows,
                                                     cols, owned);
  return new combblas::SpDCCols<grid_index, Value>(sorted, false);
}

// Bytes of a local block as SUMMA broadcasts it (SpParHelper::BCastMatrix).
template <class Value>
std::int64_t broadcast_bytes(const combblas::SpDCCols<grid_index, Value>& block) {
  const auto nnz = block.getnnz();
  return nnz == 0
             ? 0
             : 8 * (2 * block.getnzc() + 1 + nnz) + static_cast<std::int64_t>(sizeof(Value)) * nnz;
}

// CombBLAS speaks MPI itself, so the grid needs the MPI communicator.
MPI_Comm mpi_handle(const comm::communicator& c) {
  const auto* over_mpi = dynamic_cast<const comm::mpi_communicator*>(&c);
  BULKGNN_EXPECTS(over_mpi != nullptr,
                  "make_row_source: the 2d grid runs on CombBLAS, which needs an MPI communicator "
                  "(got one for stage '{}')",
                  c.stage());
  return over_mpi->handle();
}

int grid_side(int ranks) {
  return static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks))));
}

class combblas_grid_rows final : public sampler::row_source {
 public:
  combblas_grid_rows(const comm::communicator& sampling, csr_view graph,
                     const vertex_partition& partition);

  [[nodiscard]] vertex_t num_vertices() const override { return num_vertices_; }
  [[nodiscard]] bool weighted() const override { return weighted_; }
  [[nodiscard]] sampler::gathered_rows rows(std::span<const vertex_t> vertices) override;

 private:
  void count_summa_traffic(std::int64_t own_selection_bytes, std::int64_t other_selection_bytes,
                           double seconds) const;

  std::unique_ptr<comm::communicator> everyone_;     // request counts
  std::unique_ptr<comm::communicator> process_row_;  // ranks (i, 0 .. q-1), by process column
  std::shared_ptr<combblas::CommGrid> grid_;
  const vertex_partition& partition_;
  vertex_t num_vertices_;
  bool weighted_;
  int side_;
  int grid_row_;
  int grid_column_;
  grid_index stride_ = 1;  // grid ids per block: the largest part
  std::unique_ptr<adjacency_matrix> adjacency_;
  // Broadcast sizes of A's blocks in this process column: this rank's, and
  // the others' summed.
  std::int64_t own_adjacency_bytes_ = 0;
  std::int64_t other_adjacency_bytes_ = 0;
};

combblas_grid_rows::combblas_grid_rows(const comm::communicator& sampling, csr_view graph,
                                       const vertex_partition& partition)
    : everyone_(sampling.split(0, sampling.rank(), sampling.stage())),
      process_row_(sampling.split(sampling.rank() / grid_side(sampling.size()),
                                  sampling.rank() % grid_side(sampling.size()), sampling.stage())),
      partition_(partition),
      num_vertices_(static_cast<vertex_t>(graph.rows)),
      weighted_(graph.weighted()),
      side_(grid_side(sampling.size())),
      grid_row_(sampling.rank() / side_),
      grid_column_(sampling.rank() % side_) {
  BULKGNN_EXPECTS(partition.parts == side_, "2d: the partition has {} parts for a {}×{} grid",
                  partition.parts, side_, side_);
  grid_ = std::make_shared<combblas::CommGrid>(mpi_handle(*everyone_), side_, side_);
  for (int p = 0; p < side_; ++p) stride_ = std::max(stride_, partition.part_size(p));

  block_tuples<adjacency_entry> entries;
  const auto first = partition.part_offsets[grid_row_];
  for (auto id = first; id < partition.part_offsets[grid_row_ + 1]; ++id) {
    const auto v = partition.old_id[id];
    const auto columns = graph.row(v);
    for (std::size_t slot = 0; slot < columns.size(); ++slot) {
      const auto w = columns[slot];
      if (partition.owner[w] != grid_column_) continue;
      entries.emplace_back(id - first, partition.local_index[w],
                           adjacency_entry{static_cast<std::int32_t>(slot),
                                           weighted_ ? graph.row_values(v)[slot] : 1.0F});
    }
  }
  auto* block = make_block(entries, stride_, stride_);
  own_adjacency_bytes_ = broadcast_bytes(*block);
  adjacency_ = std::make_unique<adjacency_matrix>(block, grid_);

  const auto process_column = sampling.split(grid_column_, grid_row_, sampling.stage());
  const auto column_bytes = process_column->all_gather(own_adjacency_bytes_);
  other_adjacency_bytes_ =
      std::accumulate(column_bytes.begin(), column_bytes.end(), std::int64_t{0}) -
      own_adjacency_bytes_;
}

void combblas_grid_rows::count_summa_traffic(std::int64_t own_selection_bytes,
                                             std::int64_t other_selection_bytes,
                                             double seconds) const {
  const std::int64_t others = side_ - 1;
  const std::int64_t sizes_and_check = 64 * others + 32 * others / side_;
  everyone_->log().add(
      everyone_->stage(),
      comm::traffic{
          .bytes_sent = others * (own_selection_bytes + own_adjacency_bytes_) + sizes_and_check,
          .bytes_received = other_selection_bytes + other_adjacency_bytes_ + sizes_and_check,
          .calls = 1,
          .seconds = seconds});
}

sampler::gathered_rows combblas_grid_rows::rows(std::span<const vertex_t> vertices) {
  const auto distinct = distinct_vertices(vertices);
  const auto counts = everyone_->all_gather(static_cast<std::int64_t>(distinct.size()));
  std::int64_t rows_per_process_row = 0;
  for (int i = 0; i < side_; ++i)
    rows_per_process_row = std::max(
        rows_per_process_row, std::accumulate(counts.begin() + i * side_,
                                              counts.begin() + (i + 1) * side_, std::int64_t{0}));
  csr_matrix rows_of_distinct;
  rows_of_distinct.cols = num_vertices_;
  if (rows_per_process_row == 0)
    return rows_for_requests(std::move(rows_of_distinct), distinct, vertices);

  // S row of request t of member j: first_row[j] + t within the process row.
  std::vector<std::int64_t> first_row(side_ + 1, 0);
  for (int j = 0; j < side_; ++j) first_row[j + 1] = first_row[j] + counts[grid_row_ * side_ + j];

  std::vector<std::vector<vertex_t>> selections(side_);  // (t, vertex) pairs
  for (std::size_t t = 0; t < distinct.size(); ++t) {
    const auto v = distinct[t];
    BULKGNN_EXPECTS(v >= 0 && v < num_vertices_, "2d: vertex {} outside the graph", v);
    selections[partition_.owner[v]].push_back(static_cast<vertex_t>(t));
    selections[partition_.owner[v]].push_back(v);
  }
  const auto selected = process_row_->all_to_all(selections);
  block_tuples<bool> ones;
  for (int j = 0; j < side_; ++j)
    for (std::size_t e = 0; e < selected[j].size(); e += 2)
      ones.emplace_back(first_row[j] + selected[j][e], partition_.local_index[selected[j][e + 1]],
                        true);
  auto* selection_local = make_block(ones, rows_per_process_row, stride_);
  const auto own_selection_bytes = broadcast_bytes(*selection_local);
  const auto row_bytes = process_row_->all_gather(own_selection_bytes);
  selection_matrix selection(selection_local, grid_);

  const stopwatch watch;
  auto product = combblas::Mult_AnXBn_Synch<select_rows_semiring, adjacency_entry, adjacency_block>(
      selection, *adjacency_);
  count_summa_traffic(
      own_selection_bytes,
      std::accumulate(row_bytes.begin(), row_bytes.end(), std::int64_t{0}) - own_selection_bytes,
      watch.seconds());

  // This rank's block of C, by row: original column ids, slots, weights.
  auto& product_block = product.seq();
  row_block pieces;
  pieces.indptr.assign(static_cast<std::size_t>(rows_per_process_row) + 1, 0);
  for (auto column = product_block.begcol(); column != product_block.endcol(); ++column)
    for (auto entry = product_block.begnz(column); entry != product_block.endnz(column); ++entry)
      ++pieces.indptr[entry.rowid() + 1];
  std::partial_sum(pieces.indptr.begin(), pieces.indptr.end(), pieces.indptr.begin());
  const auto nnz = static_cast<std::size_t>(pieces.indptr.back());
  pieces.columns.resize(nnz);
  pieces.slots.resize(nnz);
  if (weighted_) pieces.weights.resize(nnz);
  std::vector<edge_t> fill(pieces.indptr.begin(), pieces.indptr.end() - 1);
  const auto first_column = partition_.part_offsets[grid_column_];
  for (auto column = product_block.begcol(); column != product_block.endcol(); ++column) {
    const auto original = partition_.old_id[first_column + column.colid()];
    for (auto entry = product_block.begnz(column); entry != product_block.endnz(column); ++entry) {
      const auto at = fill[entry.rowid()]++;
      pieces.columns[at] = original;
      pieces.slots[at] = entry.value().slot;
      if (weighted_) pieces.weights[at] = entry.value().weight;
    }
  }

  std::vector<piece_stream> replies(side_);
  for (int j = 0; j < side_; ++j)
    for (auto row = first_row[j]; row < first_row[j + 1]; ++row)
      pieces.write_piece(row, replies[j]);
  const auto answered = exchange(*process_row_, std::move(replies), weighted_);

  piece_reader from_row(answered.entries, answered.weights);
  for (std::size_t t = 0; t < distinct.size(); ++t) from_row.append_next_row(rows_of_distinct);
  return rows_for_requests(std::move(rows_of_distinct), distinct, vertices);
}

}  // namespace

std::unique_ptr<sampler::row_source> make_combblas_grid_rows(const comm::communicator& sampling,
                                                             csr_view graph,
                                                             const vertex_partition& partition) {
  return std::make_unique<combblas_grid_rows>(sampling, graph, partition);
}

}  // namespace bulkgnn::distributed::detail
