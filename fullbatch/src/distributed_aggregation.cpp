#include "bulkgnn/fullbatch/distributed_aggregation.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/fullbatch/compression.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "part_lists.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

namespace bulkgnn::fullbatch {

namespace {

using detail::part_list;
using detail::part_of_new_id;
using detail::routed_entry;

constexpr auto float_bytes = static_cast<std::int64_t>(sizeof(float));

std::int64_t tile_bytes(const csr_matrix& m) {
  return static_cast<std::int64_t>(m.indptr.size() * sizeof(edge_t) +
                                   m.indices.size() * sizeof(vertex_t) +
                                   m.values.size() * sizeof(float));
}

std::vector<std::int64_t> times(std::vector<std::int64_t> counts, std::int64_t factor) {
  for (auto& c : counts) c *= factor;
  return counts;
}

// y = a·x, or zeros where a has no columns (a replica of a 1.5D team with no
// parts to multiply by, a 3D layer with no feature columns).
void multiply(const executor& exec, const csr_matrix& a, dense_view<const float> x,
              dense_view<float> y) {
  if (a.cols == 0 || y.cols == 0) {
    std::fill(y.data.begin(), y.data.end(), 0.0f);
    return;
  }
  kernels::spmm(exec, a.view(), x, y);
}

// Which ranks hold the tile of a (row part, column part): `first(row part,
// column part)` and the `copies` − 1 ranks after it at steps of `stride`
// (3D replicates every tile over its layers).
struct tile_holders {
  std::function<int(int, int)> first;
  int copies = 1;
  int stride = 0;
};

// The tiles of Â and Âᵀ this rank holds, from every rank's rows of Â: each
// entry (and its transpose) goes to the holders of its (row part, column
// part), which number it with their row and column lists.
struct tile_pair {
  csr_matrix forward;
  csr_matrix backward;
};

tile_pair route_tiles(comm::communicator& setup, const distributed::vertex_partition& partition,
                      const csr_matrix& rows, std::int64_t first_row, bool sends,
                      const tile_holders& holders, const part_list& row_list,
                      const part_list& col_list) {
  std::vector<std::vector<routed_entry>> outgoing(static_cast<std::size_t>(setup.size()));
  if (sends) {
    for (std::int64_t i = 0; i < rows.rows; ++i) {
      const auto v = static_cast<vertex_t>(first_row + i);
      const int row_part = part_of_new_id(partition, v);
      for (auto e = rows.indptr[i]; e < rows.indptr[i + 1]; ++e) {
        const vertex_t u = rows.indices[e];
        const int col_part = part_of_new_id(partition, u);
        const int forward_holder = holders.first(row_part, col_part);
        const int backward_holder = holders.first(col_part, row_part);
        for (int copy = 0; copy < holders.copies; ++copy) {
          outgoing[forward_holder + copy * holders.stride].push_back({v, u, rows.values[e], 0});
          outgoing[backward_holder + copy * holders.stride].push_back({u, v, rows.values[e], 1});
        }
      }
    }
  }
  const auto incoming = setup.all_to_all(outgoing);
  outgoing.clear();
  std::vector<routed_entry> forward, backward;
  for (const auto& from : incoming) {
    for (auto e : from) {
      const int row_part = part_of_new_id(partition, e.row);
      const int col_part = part_of_new_id(partition, e.col);
      e.row = row_list.local(e.row, row_part);
      e.col = col_list.local(e.col, col_part);
      (e.transposed != 0 ? backward : forward).push_back(e);
    }
  }
  return {detail::tile_from_entries(std::move(forward), row_list.size(), col_list.size()),
          detail::tile_from_entries(std::move(backward), row_list.size(), col_list.size())};
}

std::vector<int> parts_where(int parts, const std::function<bool(int)>& keep) {
  std::vector<int> listed;
  for (int p = 0; p < parts; ++p)
    if (keep(p)) listed.push_back(p);
  return listed;
}

// 1D, 2D and 3D: stationary-A SUMMA. A product all-gathers the rows of the
// tile's columns within the grid column, multiplies, and reduce-scatters
// the partial rows within the grid row (1D: the grid column is every rank
// and the grid row this rank alone). With c > 1 layers (3D) a product first
// trades row blocks for column blocks within the fiber, so that layer ℓ
// carries columns ℓ of every row of the fiber's parts, and trades back
// after.
class grid_aggregation final : public distributed_aggregation {
 public:
  grid_aggregation(const grid_layout& layout, comm::communicator& world,
                   const distributed::vertex_partition& partition, const csr_matrix& part_rows)
      : distributed_aggregation(partition.part_offsets[layout.part_of_rank(world.rank())],
                                partition.part_size(layout.part_of_rank(world.rank()))),
        layers_(layout.grid().layers()),
        one_d_(layout.kind() == grid_kind::one_d) {
    const int r = world.rank();
    const auto& grid = layout.grid();
    const int c = layers_;
    // Rank (ℓ, a, b) = ℓq² + aq + b; 1D is one grid row per rank: a = r, b = 0.
    // Named copies, not a structured binding: the lambdas below capture them.
    const auto at = grid.position_of(r);
    const int layer = at.layer;
    const int a = at.row;
    const int b = at.column;
    const int grid_rows = grid.rows();
    const int grid_cols = grid.columns();
    // Super-part (a, b): parts [(a·cols + b)·c, +c), contiguous along a grid row.
    const auto super_part = [&](int part) { return part / c; };
    const auto grid_row_of = [&](int part) { return super_part(part) / grid_cols; };
    const auto grid_col_of = [&](int part) { return super_part(part) % grid_cols; };
    const int parts = layout.parts();
    const part_list row_list(partition,
                             parts_where(parts, [&](int p) { return grid_row_of(p) == a; }));
    std::vector<int> col_parts;
    for (int row = 0; row < grid_rows; ++row)
      for (int l = 0; l < c; ++l) col_parts.push_back((row * grid_cols + b) * c + l);
    const part_list col_list(partition, col_parts);
    const tile_holders holders{
        .first =
            [&](int row_part, int col_part) {
              return grid.rank_at({.row = grid_row_of(row_part), .column = grid_col_of(col_part)});
            },
        .copies = c,
        .stride = grid_rows * grid_cols};
    const auto setup = world.split(0, r, "setup");
    auto tiles =
        route_tiles(*setup, partition, part_rows, first_row(), true, holders, row_list, col_list);
    forward_tile_ = std::move(tiles.forward);
    backward_tile_ = std::move(tiles.backward);
    set_tile_bytes(tile_bytes(forward_tile_) + tile_bytes(backward_tile_));
    // Rows each member of a grid column, grid row and fiber holds, in their
    // communicators' rank order.
    for (int row = 0; row < grid_rows; ++row) {
      std::int64_t rows = 0;
      for (int l = 0; l < c; ++l) rows += partition.part_size((row * grid_cols + b) * c + l);
      gather_rows_.push_back(rows);
    }
    for (int col = 0; col < grid_cols; ++col) {
      std::int64_t rows = 0;
      for (int l = 0; l < c; ++l) rows += partition.part_size((a * grid_cols + col) * c + l);
      scatter_rows_.push_back(rows);
    }
    for (int l = 0; l < c; ++l)
      fiber_rows_.push_back(partition.part_size((a * grid_cols + b) * c + l));
    for (int row = 0; row < a; ++row) own_gather_start_ += gather_rows_[row];
    layer_ = layer;
    for (auto* comms : {&forward_comms_, &backward_comms_}) {
      const auto stage = comms == &forward_comms_ ? "forward" : "backward";
      comms->gather = world.split(layer * grid_cols + b, a, stage);
      comms->scatter = world.split(layer * grid_rows + a, b, stage);
      comms->fiber = world.split(a * grid_cols + b, layer, stage);
    }
  }

  void set_compression_rate(int rate) override {
    BULKGNN_EXPECTS(rate == 1 || one_d_,
                    "--compress: the 2d and 3d grids also send partial sums, which this "
                    "compression does not cover; use --grid 1d or sar");
    rate_ = rate;
  }

  void forward(const executor& exec, int, const trainer::aggregation_block&,
               dense_view<const float> x, dense_view<float> out) override {
    multiply_through_grid(exec, forward_tile_, forward_comms_, x, out);
  }

  void backward(const executor& exec, int, const trainer::aggregation_block&,
                dense_view<const float> grad_out, dense_view<float> grad_x) override {
    multiply_through_grid(exec, backward_tile_, backward_comms_, grad_out, grad_x);
  }

 private:
  struct communicators {
    std::unique_ptr<comm::communicator> gather;   // grid column, ranked by grid row
    std::unique_ptr<comm::communicator> scatter;  // grid row, ranked by grid column
    std::unique_ptr<comm::communicator> fiber;    // the c layers' ranks at (a, b)
  };

  // Feature columns [first, first + count) of layer ℓ's share.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> columns_of(int layer,
                                                                 std::int64_t width) const {
    const std::int64_t base = width / layers_;
    const std::int64_t extra = width % layers_;
    return {layer * base + std::min<std::int64_t>(layer, extra), base + (layer < extra ? 1 : 0)};
  }

  void multiply_through_grid(const executor& exec, const csr_matrix& tile, communicators& comms,
                             dense_view<const float> x, dense_view<float> out) {
    if (layers_ == 1) {
      note_buffer_bytes(product(exec, tile, comms, x, out));
      return;
    }
    std::int64_t fiber_bytes = 0;
    const auto columns = to_layer_columns(*comms.fiber, x, fiber_bytes);
    trainer::matrix result(columns.rows(), columns.cols());
    const auto held = product(exec, tile, comms, columns.view(), result.view());
    const auto layer_bytes = 2 * columns.rows() * columns.cols() * float_bytes;
    note_buffer_bytes(std::max(fiber_bytes, layer_bytes + held) +
                      from_layer_columns(*comms.fiber, result.view(), out));
  }

  // This rank's rows × every column → the fiber's rows × this layer's columns.
  // `held`: the bytes of the exchange's buffers.
  trainer::matrix to_layer_columns(comm::communicator& fiber, dense_view<const float> x,
                                   std::int64_t& held) {
    const std::int64_t width = x.cols;
    std::vector<std::int64_t> send_counts, receive_counts;
    std::vector<float> send;
    for (int l = 0; l < layers_; ++l) {
      const auto [first, count] = columns_of(l, width);
      for (std::int64_t i = 0; i < x.rows; ++i)
        send.insert(send.end(), x.data.begin() + i * width + first,
                    x.data.begin() + i * width + first + count);
      send_counts.push_back(x.rows * count);
      receive_counts.push_back(fiber_rows_[l] * columns_of(layer_, width).second);
    }
    std::vector<float> received(static_cast<std::size_t>(
        std::accumulate(receive_counts.begin(), receive_counts.end(), std::int64_t{0})));
    fiber.all_to_all(std::span<const float>(send), send_counts, std::span<float>(received),
                     receive_counts);
    held = static_cast<std::int64_t>(send.size() + 2 * received.size()) * float_bytes;
    trainer::matrix columns(
        std::accumulate(fiber_rows_.begin(), fiber_rows_.end(), std::int64_t{0}),
        columns_of(layer_, width).second);
    std::copy(received.begin(), received.end(), columns.data().begin());
    return columns;
  }

  // The fiber's rows × this layer's columns → this rank's rows × every
  // column; returns the bytes of the receive buffer.
  std::int64_t from_layer_columns(comm::communicator& fiber, dense_view<const float> columns,
                                  dense_view<float> out) {
    const std::int64_t width = out.cols;
    const auto mine = columns_of(layer_, width).second;
    std::vector<std::int64_t> send_counts, receive_counts;
    for (int l = 0; l < layers_; ++l) {
      send_counts.push_back(fiber_rows_[l] * mine);
      receive_counts.push_back(out.rows * columns_of(l, width).second);
    }
    std::vector<float> received(static_cast<std::size_t>(out.rows * width));
    fiber.all_to_all(
        std::span<const float>(columns.data.data(), static_cast<std::size_t>(columns.rows * mine)),
        send_counts, std::span<float>(received), receive_counts);
    auto next = received.begin();
    for (int l = 0; l < layers_; ++l) {
      const auto [first, count] = columns_of(l, width);
      for (std::int64_t i = 0; i < out.rows; ++i, next += count)
        std::copy(next, next + count, out.data.begin() + i * width + first);
    }
    return static_cast<std::int64_t>(received.size()) * float_bytes;
  }

  // out (this rank's rows of the tile's row block) = the grid row's sum of
  // tile·(the grid column's rows of x); returns the bytes of its buffers.
  std::int64_t product(const executor& exec, const csr_matrix& tile, communicators& comms,
                       dense_view<const float> x, dense_view<float> out) {
    const std::int64_t width = x.cols;
    trainer::matrix gathered;
    dense_view<const float> sources = x;
    if (comms.gather->size() > 1) {
      if (rate_ > 1) {
        const quantising_codec codec(rate_, std::max<std::int64_t>(1, width));
        const auto all = comms.gather->all_gather_v(x.data, codec);
        gathered = trainer::matrix(tile.cols, width);
        std::copy(all.begin(), all.end(), gathered.data().begin());
        // This rank's own rows never crossed a rank: they stay exact.
        std::copy(x.data.begin(), x.data.end(),
                  gathered.data().begin() + own_gather_start_ * width);
      } else {
        gathered = trainer::matrix(tile.cols, width);
        comms.gather->all_gather_v(x.data, gathered.data(), times(gather_rows_, width));
      }
      sources = gathered.view();
    }
    std::int64_t held = gathered.rows() * width * float_bytes;
    if (comms.scatter->size() == 1) {
      multiply(exec, tile, sources, out);
    } else {
      trainer::matrix partial(tile.rows, width);
      multiply(exec, tile, sources, partial.view());
      comms.scatter->reduce_scatter(std::span<const float>(partial.data()), out.data,
                                    times(scatter_rows_, width));
      held += partial.rows() * width * float_bytes;
    }
    return held;
  }

  int layers_;
  bool one_d_;
  int layer_ = 0;
  int rate_ = 1;
  csr_matrix forward_tile_;
  csr_matrix backward_tile_;
  std::int64_t own_gather_start_ = 0;  // where this rank's rows sit among the gathered
  std::vector<std::int64_t> gather_rows_;
  std::vector<std::int64_t> scatter_rows_;
  std::vector<std::int64_t> fiber_rows_;
  communicators forward_comms_;
  communicators backward_comms_;
};

// 1.5D (CAGNET): P/c parts, team i (ranks i, i + P/c, ..., i + (c − 1)·P/c:
// one per replica, grid_layout) computes part i's rows. Replica k of every team multiplies by the
// parts j ≡ k (mod c): the replica-k rank of team j broadcasts part j's rows to the other teams'
// replica-k ranks, and the team all-reduces its c partial products.
class replicated_rows_aggregation final : public distributed_aggregation {
 public:
  replicated_rows_aggregation(const grid_layout& layout, comm::communicator& world,
                              const distributed::vertex_partition& partition,
                              const csr_matrix& part_rows)
      : distributed_aggregation(partition.part_offsets[layout.part_of_rank(world.rank())],
                                partition.part_size(layout.part_of_rank(world.rank()))) {
    const int c = layout.replication();
    const int team = layout.part_of_rank(world.rank());
    const int replica = layout.replica_of_rank(world.rank());
    const part_list row_list(partition, {team});
    const part_list col_list(partition,
                             parts_where(layout.parts(), [&](int p) { return p % c == replica; }));
    for (const int p : col_list.parts()) {
      multiplied_parts_.push_back(p);
      part_starts_.push_back(col_list.start_of(p));
      part_rows_.push_back(partition.part_size(p));
    }
    const tile_holders holders{.first = [&](int row_part, int col_part) {
      return layout.rank_of_part(row_part, col_part % c);
    }};
    const auto setup = world.split(0, world.rank(), "setup");
    // Every replica holds the team's rows; replica 0 sends them.
    auto tiles = route_tiles(*setup, partition, part_rows, first_row(), replica == 0, holders,
                             row_list, col_list);
    forward_tile_ = std::move(tiles.forward);
    backward_tile_ = std::move(tiles.backward);
    set_tile_bytes(tile_bytes(forward_tile_) + tile_bytes(backward_tile_));
    for (auto* comms : {&forward_comms_, &backward_comms_}) {
      const auto stage = comms == &forward_comms_ ? "forward" : "backward";
      comms->replica = world.split(replica, team, stage);
      comms->team = world.split(team, replica, stage);
    }
    team_ = team;
  }

  void set_compression_rate(int rate) override {
    BULKGNN_EXPECTS(rate == 1,
                    "--compress: the 1.5d grid also sums partial products over each team, "
                    "which this compression does not cover; use --grid 1d or sar");
  }

  void forward(const executor& exec, int, const trainer::aggregation_block&,
               dense_view<const float> x, dense_view<float> out) override {
    product(exec, forward_tile_, forward_comms_, x, out);
  }

  void backward(const executor& exec, int, const trainer::aggregation_block&,
                dense_view<const float> grad_out, dense_view<float> grad_x) override {
    product(exec, backward_tile_, backward_comms_, grad_out, grad_x);
  }

 private:
  struct communicators {
    std::unique_ptr<comm::communicator> replica;  // replica k of every team, ranked by team
    std::unique_ptr<comm::communicator> team;     // this team's c replicas
  };

  void product(const executor& exec, const csr_matrix& tile, communicators& comms,
               dense_view<const float> x, dense_view<float> out) {
    const std::int64_t width = x.cols;
    trainer::matrix gathered(tile.cols, width);
    for (std::size_t i = 0; i < multiplied_parts_.size(); ++i) {
      const auto slot = gathered.data().subspan(static_cast<std::size_t>(part_starts_[i] * width),
                                                static_cast<std::size_t>(part_rows_[i] * width));
      if (multiplied_parts_[i] == team_) std::copy(x.data.begin(), x.data.end(), slot.begin());
      comms.replica->broadcast(slot, multiplied_parts_[i]);
    }
    multiply(exec, tile, gathered.view(), out);
    comms.team->all_reduce(out.data);
    note_buffer_bytes(gathered.rows() * width * float_bytes);
  }

  int team_ = 0;
  std::vector<int> multiplied_parts_;
  std::vector<std::int64_t> part_starts_;
  std::vector<std::int64_t> part_rows_;
  csr_matrix forward_tile_;
  csr_matrix backward_tile_;
  communicators forward_comms_;
  communicators backward_comms_;
};

// SAR: rank r holds its rows of Â split by the part of their columns, the
// remote ones cut to the columns they reference (the boundary B_q of part
// q). Step s of a product trades with ranks r + s and r - s: forward, rank r
// sends part r + s the rows it references and receives B_{r-s} of part r - s,
// multiplies, adds and frees them; backward, it sends part r + s the
// product Â[F_r, B_{r+s}]ᵀ·G_r and adds what part r - s sends it. So at most
// one remote part's rows are held at a time, in either pass.
class sequential_aggregation final : public distributed_aggregation {
 public:
  sequential_aggregation(comm::communicator& world, const distributed::vertex_partition& partition,
                         const csr_matrix& part_rows)
      : distributed_aggregation(partition.part_offsets[world.rank()],
                                partition.part_size(world.rank())),
        rank_(world.rank()),
        ranks_(world.size()) {
    split_rows_by_part(partition, part_rows);
    const auto setup = world.split(0, rank_, "setup");
    // needed_by_[q]: rows of this part that part q references, as local ids.
    needed_by_ = setup->all_to_all(boundary_);
    forward_ = world.split(0, rank_, "forward");
    backward_ = world.split(0, rank_, "backward");
  }

  void set_compression_rate(int rate) override { rate_ = rate; }

  void forward(const executor& exec, int, const trainer::aggregation_block&,
               dense_view<const float> x, dense_view<float> out) override {
    const std::int64_t width = x.cols;
    multiply(exec, local_, x, out);
    for (int s = 1; s < ranks_; ++s) {
      const int to = (rank_ + s) % ranks_;
      const int from = (rank_ - s + ranks_) % ranks_;
      trainer::matrix outgoing(static_cast<std::int64_t>(needed_by_[to].size()), width);
      kernels::gather_dense_rows(exec, x, needed_by_[to], outgoing.view());
      trainer::matrix incoming(static_cast<std::int64_t>(boundary_[from].size()), width);
      exchange(*forward_, outgoing.view(), to, incoming.view(), from, s);
      trainer::matrix product(out.rows, width);
      multiply(exec, remote_[from], incoming.view(), product.view());
      add_into(product.view(), out);
      note_buffer_bytes((outgoing.rows() + incoming.rows() + product.rows()) * width * float_bytes);
    }
  }

  void backward(const executor& exec, int, const trainer::aggregation_block&,
                dense_view<const float> grad_out, dense_view<float> grad_x) override {
    const std::int64_t width = grad_out.cols;
    multiply(exec, local_transposed_, grad_out, grad_x);
    for (int s = 1; s < ranks_; ++s) {
      const int to = (rank_ + s) % ranks_;
      const int from = (rank_ - s + ranks_) % ranks_;
      trainer::matrix outgoing(static_cast<std::int64_t>(boundary_[to].size()), width);
      multiply(exec, remote_transposed_[to], grad_out, outgoing.view());
      trainer::matrix incoming(static_cast<std::int64_t>(needed_by_[from].size()), width);
      exchange(*backward_, outgoing.view(), to, incoming.view(), from, s);
      for (std::size_t i = 0; i < needed_by_[from].size(); ++i) {
        auto* row = grad_x.data.data() + static_cast<std::int64_t>(needed_by_[from][i]) * width;
        const auto* add = incoming.data().data() + static_cast<std::int64_t>(i) * width;
        for (std::int64_t k = 0; k < width; ++k) row[k] += add[k];
      }
      note_buffer_bytes((outgoing.rows() + incoming.rows()) * width * float_bytes);
    }
  }

 private:
  static void add_into(dense_view<const float> x, dense_view<float> y) {
    for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] += x.data[i];
  }

  // local_: Â[F_r, F_r]; remote_[q]: Â[F_r, B_q] with B_q's columns
  // numbered in increasing id (boundary_[q], as part q's local ids).
  void split_rows_by_part(const distributed::vertex_partition& partition,
                          const csr_matrix& part_rows) {
    const executor host;
    boundary_.assign(static_cast<std::size_t>(ranks_), {});
    for (std::int64_t e = 0; e < static_cast<std::int64_t>(part_rows.indices.size()); ++e) {
      const vertex_t u = part_rows.indices[e];
      const int q = part_of_new_id(partition, u);
      if (q != rank_) boundary_[q].push_back(static_cast<vertex_t>(u - partition.part_offsets[q]));
    }
    for (auto& b : boundary_) {
      std::sort(b.begin(), b.end());
      b.erase(std::unique(b.begin(), b.end()), b.end());
    }
    std::vector<std::vector<routed_entry>> entries(static_cast<std::size_t>(ranks_));
    for (std::int64_t i = 0; i < part_rows.rows; ++i) {
      for (auto e = part_rows.indptr[i]; e < part_rows.indptr[i + 1]; ++e) {
        const vertex_t u = part_rows.indices[e];
        const int q = part_of_new_id(partition, u);
        const auto local = static_cast<vertex_t>(u - partition.part_offsets[q]);
        const auto column =
            q == rank_ ? local
                       : static_cast<vertex_t>(
                             std::lower_bound(boundary_[q].begin(), boundary_[q].end(), local) -
                             boundary_[q].begin());
        entries[q].push_back({static_cast<vertex_t>(i), column, part_rows.values[e], 0});
      }
    }
    remote_.resize(static_cast<std::size_t>(ranks_));
    remote_transposed_.resize(static_cast<std::size_t>(ranks_));
    std::int64_t held = 0;
    for (int q = 0; q < ranks_; ++q) {
      const auto columns =
          q == rank_ ? part_rows.rows : static_cast<std::int64_t>(boundary_[q].size());
      auto tile = detail::tile_from_entries(std::move(entries[q]), part_rows.rows, columns);
      auto transposed = kernels::transpose(host, tile.view());
      held += tile_bytes(tile) + tile_bytes(transposed);
      (q == rank_ ? local_ : remote_[q]) = std::move(tile);
      (q == rank_ ? local_transposed_ : remote_transposed_[q]) = std::move(transposed);
    }
    set_tile_bytes(held);
  }

  // Sends `outgoing` to rank `to` while receiving `incoming` from `from`,
  // through the codec of the current rate; the encoded length travels first.
  void exchange(comm::communicator& ranks, dense_view<const float> outgoing, int to,
                dense_view<float> incoming, int from, int tag) {
    if (rate_ == 1) {
      auto receiving = ranks.irecv(incoming.data, from, tag);
      auto sending = ranks.isend(outgoing.data, to, tag);
      receiving.wait();
      sending.wait();
      return;
    }
    const quantising_codec codec(rate_, std::max<std::int64_t>(1, outgoing.cols));
    const auto encoded = codec.encode(std::as_bytes(outgoing.data), comm::element_info_of<float>());
    std::int64_t sent_length = static_cast<std::int64_t>(encoded.size());
    std::int64_t received_length = 0;
    {
      auto receiving = ranks.irecv(std::span<std::int64_t>(&received_length, 1), from, tag);
      auto sending = ranks.isend(std::span<const std::int64_t>(&sent_length, 1), to, tag);
      receiving.wait();
      sending.wait();
    }
    std::vector<std::byte> arrived(static_cast<std::size_t>(received_length));
    auto receiving = ranks.irecv(std::span<std::byte>(arrived), from, tag);
    auto sending = ranks.isend(std::span<const std::byte>(encoded), to, tag);
    receiving.wait();
    sending.wait();
    const auto raw = codec.decode(arrived, comm::element_info_of<float>());
    if (raw.size() != incoming.data.size_bytes())
      throw error(fmt::format("sar: rank {} sent {} bytes of rows for {} here", from, raw.size(),
                              incoming.data.size_bytes()));
    std::memcpy(incoming.data.data(), raw.data(), raw.size());
  }

  int rank_;
  int ranks_;
  int rate_ = 1;
  csr_matrix local_;
  csr_matrix local_transposed_;
  std::vector<csr_matrix> remote_;             // by part; empty at this rank's
  std::vector<csr_matrix> remote_transposed_;  // by part
  std::vector<std::vector<vertex_t>> boundary_;
  std::vector<std::vector<vertex_t>> needed_by_;
  std::unique_ptr<comm::communicator> forward_;
  std::unique_ptr<comm::communicator> backward_;
};

}  // namespace

std::unique_ptr<distributed_aggregation> make_distributed_aggregation(
    const grid_layout& layout, comm::communicator& world,
    const distributed::vertex_partition& partition, const csr_matrix& part_rows) {
  BULKGNN_EXPECTS(world.size() == layout.ranks() && partition.parts == layout.parts(),
                  "make_distributed_aggregation: {} ranks and {} parts for a {} grid of {} "
                  "ranks and {} parts",
                  world.size(), partition.parts, grid_kind_name(layout.kind()), layout.ranks(),
                  layout.parts());
  BULKGNN_EXPECTS(part_rows.rows == partition.part_size(layout.part_of_rank(world.rank())) &&
                      part_rows.cols == partition.num_vertices(),
                  "make_distributed_aggregation: rank {} passed {}x{} rows of Â for its part of "
                  "{} rows of {} vertices",
                  world.rank(), part_rows.rows, part_rows.cols,
                  partition.part_size(layout.part_of_rank(world.rank())), partition.num_vertices());
  switch (layout.kind()) {
    case grid_kind::one_and_half_d:
      return std::make_unique<replicated_rows_aggregation>(layout, world, partition, part_rows);
    case grid_kind::sar:
      return std::make_unique<sequential_aggregation>(world, partition, part_rows);
    default:
      return std::make_unique<grid_aggregation>(layout, world, partition, part_rows);
  }
}

}  // namespace bulkgnn::fullbatch
