#pragma once

// Closed-form per-epoch communication volume of distributed sampling and
// training, in the units the traffic_log counts (comm/communicator.hpp): bytes a
// rank sends to other ranks, 4 bytes per count of every all-to-all, ring
// all-reduce 2(P-1)/P·N. Pure C++ (no MPI), so `bulkgnn model` runs anywhere.
//
// What is exact and what is approximated:
//  - exact: minibatch and step counts, all-to-all count overhead, gradient
//    all-reduce volume (given the parameter count), and the byte formulas of
//    one collective row fetch per grid given its request sizes (the
//    *_fetch_bytes functions below, transcribed from the comments of
//    sharded_rows.cpp, sharded_rows_2d.cpp and sharded_rows_3d.cpp).
//  - 2D-SUMMA is the CombBLAS product the build runs for `--grid 2d-summa`
//    (2D itself is the layered grid with one layer, below): every call (one
//    per hop per sampling step) broadcasts every block of A along its process column,
//    (√P - 1)(16·nnz + 16·n_c + 8P) bytes whatever the request, where n_c is
//    the non-empty (block row, column) pairs of A. Each entry travels as an
//    8-byte row index and an 8-byte {slot, weight} value, the weight even for
//    unweighted graphs. This term dominates unless the requests of a call
//    cover most of A, which is why 2D moves far more than 1.5D or 3D here.
//  - 3D is the layered grid the build runs (sharded_rows_3d.cpp): requests
//    go to the row owner's fiber rank, which completes the row from its
//    process row; it moves only the requested rows, never A.
//  - 1.5D and 3D draw node-wise samples at the row's owner by default
//    (draw_location::owner): a request per frontier row of each minibatch
//    goes out and only the drawn entries come back, so that term grows with
//    the fanout. A hop with fanout -1 fetches whole rows either way.
//  - approximated: the expected number of distinct vertices a minibatch (or
//    a bulk of minibatches) reaches per hop. We use a degree-biased occupancy
//    formula with independent draws: a neighbour draw lands on v with
//    probability in_v / nnz, so after m draws v has been reached with
//    probability 1 - (1 - in_v/nnz)^m; a seed set of k·b vertices of the
//    training split contains a training vertex with probability k·b/|train|.
//    Draws are counted as "fresh" only for the part of a row not yet drawn:
//    every frontier vertex draws again at every later hop (sources keep their
//    destinations), so a vertex first reached at hop j has, by hop l, an
//    expected uncovered share Π_{j<=i<l} (1 - min(s_i, d)/d) of its row, less
//    the edge back to the vertex it was reached from (reciprocity). Other
//    correlations (shared neighbourhoods, communities) are ignored, so
//    frontiers still come out somewhat high on clustered graphs.
//  - approximated: the share of a frontier owned by another rank is taken as
//    1 - 1/T (T ranks in a team), i.e. ownership independent of selection.
//    A block partition of a graph whose hubs cluster at low ids breaks this.
//  - without a degree histogram, degrees follow a log-normal distribution
//    matched to E[d] and E[d²] (default E[d²] = 2·E[d]², a mildly skewed
//    graph); pass the moments or a dataset for better numbers.

#include "bulkgnn/core/grid.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bulkgnn::distributed::cost {

// Vertices that share in-degree, out-degree and training membership; the
// model sums over groups rather than vertices.
struct degree_group {
  double in_degree = 0;   // column count: how often draws hit it
  double out_degree = 0;  // row length: what a fetch of its row costs
  bool train = true;
  double count = 0;  // vertices in the group (double: synthetic)
};

struct graph_stats {
  std::int64_t nodes = 0;
  std::int64_t edges = 0;            // nnz of the adjacency (directed entries)
  std::int64_t train = 0;            // training vertices (seeds per epoch)
  std::vector<degree_group> groups;  // sums to `nodes`
  // Share of edges whose reverse is an edge too (1 for undirected graphs): a
  // vertex reached over (u, v) finds u in its own row, already sampled.
  double reciprocity = 1;
};

// Groups built from a log-normal degree law with mean edges/nodes and the
// given second moment (<= 0: 2·mean²), in `buckets` equal-probability
// quantiles; in- and out-degree equal (an undirected graph).
[[nodiscard]] graph_stats synthetic_stats(std::int64_t nodes, std::int64_t edges,
                                          std::int64_t train, double second_moment = 0,
                                          int buckets = 64);

// Groups from a CSR adjacency (indptr of rows+1 entries, column indices) and
// a training mask (empty: every vertex trains).
[[nodiscard]] graph_stats measured_stats(std::int64_t rows, const std::int64_t* indptr,
                                         const std::int32_t* indices,
                                         const std::vector<bool>& train_mask);

// The grids are minibatch sampling's (minibatch_grids, core/grid.hpp): two_d
// is sharded_rows' 2d (the layered grid with one layer: three_d's formulas
// with c = 1); two_d_summa is CombBLAS's SUMMA (two_d_fetch_bytes). Any other
// grid predicts nan.

// Which sampler draws the minibatches (sampler::sampler_kind, which this
// MPI-free module does not include).
enum class sampler_family { node_wise, ladies, fastgcn };

struct workload {
  sampler_family sampler = sampler_family::node_wise;
  std::int64_t batch_size = 1024;
  std::vector<std::int64_t> fanouts{15, 10, 5};  // -1: every neighbour
  std::int64_t bulk = 32;                        // minibatches per rank per step (sample)
  std::int64_t features = 128;
  std::int64_t hidden = 256;
  std::int64_t classes = 2;
  std::int64_t parameters = 0;       // 0: counted from the widths (model_parameters)
  std::int64_t max_minibatches = 0;  // 0: the whole epoch
  bool weighted = false;             // sharded rows carry edge values too
  // 1.5D/3D node-wise draws at the row's owner; layer-wise hops have the
  // frontier's rows cut to each rank's columns there.
  bool draw_at_owner = true;
  // Remote feature rows each rank keeps (the hot-vertex cache), taken as the
  // remote vertices of largest in-degree: the likeliest inputs, which a cache
  // chosen by access converges to as well.
  std::int64_t feature_cache_rows = 0;
  // The model, as the sampler and layer tables describe it: its layers (0:
  // one per fanout; ShaDow's are not its hops), each [W_neigh; W_self]
  // (GraphSAGE) or W alone (GCN), and a bias.
  std::int64_t layers = 0;
  bool root_weight = true;
  // How a minibatch grows by a hop: up to `fanout` neighbours per frontier
  // vertex (node-wise), or `fanout` vertices (layer-wise). any_depth: every
  // layer but the seeds' runs on all that the hops reached (ShaDow).
  bool fanout_per_destination = true;
  bool any_depth = false;
};

// What a network costs: a message of b bytes takes latency + b / bandwidth.
struct network {
  double bandwidth = 25e9;  // bytes per second per rank (GPU), each way
  double latency = 2e-6;    // seconds per message
};

// The model's layer count: w.layers, or one per fanout.
[[nodiscard]] std::int64_t model_layers(const workload& w);
// Layers f -> hidden -> ... -> classes, each [W_neigh; W_self] (2·in·out)
// with a root weight, W (in·out) without, plus a bias (out); w.parameters
// where given.
[[nodiscard]] std::int64_t model_parameters(const workload& w);

// Memory. What one training process holds at once, in bytes, counting only
// what it cannot do without: the model's state (weights, gradients and two
// Adam moments), one minibatch's activations and gradients, and full-graph
// evaluation's widest layer. The graph, the features and the loader's
// buffers come on top, so the total is a lower estimate, though each
// minibatch layer is sized by minibatch_vertex_bound, its most.
struct training_memory {
  double model = 0;
  double minibatch = 0;
  double evaluation = 0;  // 0 unless full-graph evaluation is asked for

  [[nodiscard]] double total() const { return model + minibatch + evaluation; }
};
// Vertices of each layer of one minibatch, seeds first (model_layers + 1
// entries): each hop adds at most `fanout` neighbours per vertex (or
// `fanout` vertices, layer-wise), never more than the graph's `nodes`.
[[nodiscard]] std::vector<double> minibatch_vertex_bound(const workload& w, std::int64_t nodes);
[[nodiscard]] training_memory training_memory_of(const workload& w, std::int64_t nodes,
                                                 bool full_evaluation);

// Expected distinct vertices per hop: frontier[l] is what hop l reads rows
// of (frontier[0] = the seeds, frontier[L] = the input nodes), row_entries[l]
// the expected sum of their row lengths, draws[l] the fresh neighbour draws of
// hop l. input_probability[i] is the probability that a vertex of group i is
// among the input nodes (the last frontier). rows[l] counts the frontier of each minibatch apart (a
// vertex in two minibatches' frontiers twice) and drawn[l] every entry their draws take (repeats of
// earlier hops' draws included): what draws at the owner move.
struct frontier_sizes {
  std::vector<double> frontier;
  std::vector<double> row_entries;
  std::vector<double> draws;
  std::vector<double> rows;
  std::vector<double> drawn;
  std::vector<double> input_probability;
};
// For `minibatches` minibatches of `batch` seeds each, sampled together:
// per-minibatch frontiers drive the draws, the union over them is returned.
[[nodiscard]] frontier_sizes expected_frontiers(const graph_stats& g, const workload& w,
                                                double batch, double minibatches);

// Per-epoch bytes sent, summed over ranks; per rank is total / ranks (the
// model is symmetric across ranks).
struct prediction {
  grid_kind kind = grid_kind::replicated;
  int ranks = 1;
  int replication = 1;
  bool valid = true;  // false when the grid cannot use this P and c
  double sampling = 0;
  double features = 0;
  double gradients = 0;
  // Messages each rank sends per epoch, per stage: an all-to-all over T ranks
  // is 2(T - 1) (its counts, then its data), a ring all-reduce over P ranks
  // 2(P - 1). The refills of a cache chosen by access every epoch are not
  // counted, and every cache is taken as chosen by in-degree.
  double sampling_messages = 0;
  double features_messages = 0;
  double gradients_messages = 0;
  [[nodiscard]] double per_rank(double total) const { return total / ranks; }
  // Seconds per epoch a rank spends communicating in one stage on `net`:
  // its bytes (the model is symmetric over ranks) over the bandwidth plus a
  // latency per message; no overlap with computation, no contention.
  [[nodiscard]] double seconds(double bytes, double messages, const network& net) const {
    return per_rank(bytes) / net.bandwidth + messages * net.latency;
  }
  [[nodiscard]] double total_seconds(const network& net) const {
    return seconds(sampling, sampling_messages, net) + seconds(features, features_messages, net) +
           seconds(gradients, gradients_messages, net);
  }
};

// Expected load of one collective row fetch (one hop of one sampling step),
// summed over the ranks.
struct fetch_load {
  double distinct = 0;  // D: distinct vertices of each requester, summed
  double entries = 0;   // E: the entries of those rows
  // 2D: distinct vertices of each process row's requests (the columns of
  // its S blocks), summed over the process rows.
  double selection_columns = 0;
  // Draws at the owner: R, the frontier rows of each requester's minibatches
  // (repeats across minibatches counted), and W, the entries drawn from them.
  double rows = 0;
  double drawn = 0;
};

// Bytes sent, summed over ranks, by one row fetch of each grid; requests
// and entries spread over owners and column blocks in proportion to their
// size (ownership independent of the request).
//  1.5D (team T = P/c): P·x·4(T-1) + (1 - 1/T)(8D + 4E (+ 4E weighted)),
//    x = 2 all-to-alls (3 weighted).
//  2D (q = √P, CombBLAS SUMMA, sharded_rows_2d.cpp):
//    8P(P-1) + 12P(q-1) + 8D(1-1/q)                          requests, S
//    + (q-1)[8(2·C_S + B_S) + 9D]                            S broadcasts
//    + (q-1)[8(2·n_c + P) + 16·nnz] + 64P(q-1) + 32q(q-1)     A broadcasts
//    + 4P(q-1) + 4D(q-1) + 8E(1-1/q) (+ 4P(q-1) + 4E(1-1/q))  pieces back
//    with C_S = selection_columns and B_S the expected non-empty S blocks.
//  3D (q = √(P/c), fiber F = cq, sharded_rows_3d.cpp):
//    8P(F-1) + 8P(q-1) + D(8(1-1/F) + 8(q-1)) + E(8(1-1/q) + 4(1-1/F))
//    (+ 4P(F-1) + 4P(q-1) + E(4(1-1/q) + 4(1-1/F)) weighted).
// Draws at the owner:
//  1.5D: P·x·4(T-1) + (1 - 1/T)(12R + 4W (+ 4W weighted)): (vertex,
//    minibatch) out, length and drawn columns (and weights) back.
//  3D: 8P(F-1) + 8P(q-1) + 12R(1-1/F) + 8D(q-1) + 8E(1-1/q) + 4W(1-1/F)
//    (+ 4P(F-1) + 4P(q-1) + 4E(1-1/q) + 4W(1-1/F) weighted): the owner's
//    fiber rank still completes each requester's distinct rows (D, E) from
//    its process row, but only drawn entries go back along the fiber.
[[nodiscard]] double one_and_half_d_draw_bytes(const fetch_load& x, int ranks, int replication,
                                               bool weighted);
[[nodiscard]] double three_d_draw_bytes(const fetch_load& x, int ranks, int layers, bool weighted);
[[nodiscard]] double one_and_half_d_fetch_bytes(const fetch_load& x, int ranks, int replication,
                                                bool weighted);
[[nodiscard]] double two_d_fetch_bytes(const fetch_load& x, int ranks, double nnz,
                                       double a_block_columns, bool weighted);
[[nodiscard]] double three_d_fetch_bytes(const fetch_load& x, int ranks, int layers, bool weighted);
// n_c: non-empty (block row, column) pairs of A when its rows are split over
// `side` blocks independently of the columns: Σ_v side·(1 - (1 - 1/side)^in_v).
[[nodiscard]] double block_columns(const graph_stats& g, int side);

// Layer-wise hops (LADIES, FastGCN), split over the ranks by columns
// (bulk_sampler::sample_slices): every rank reads the whole frontier of every
// minibatch of a step. Expected load of one hop of a step, whole minibatches:
//  frontier_rows D and entries E: the distinct frontier vertices of the
//    step's minibatches and their row lengths;
//  sources: Σ_j |sources_j|, the inverse probabilities all-reduced;
//  block_entries: Σ_j block entries (A + I between frontier and sources);
//  candidates: Σ_j min(fanout, entries of the weight row), over all ranks'
//    column ranges, each rank offering at most `fanout` per minibatch.
// Approximations: a hop draws `fanout` distinct vertices with probability
// ∝ in-degree (LADIES: among the vertices the frontier reaches, an
// in-neighbour being in a frontier of F vertices with probability F/n;
// FastGCN: among all, keeping those the frontier reaches), inclusion
// 1 - exp(-λ·in_v) with λ matching the fanout; membership of different
// minibatches independent apart from disjoint seeds.
struct layer_wise_load {
  double frontier_rows = 0;
  double entries = 0;
  double sources = 0;
  double block_entries = 0;
  double candidates = 0;
};
[[nodiscard]] std::vector<layer_wise_load> expected_layer_wise_hops(const graph_stats& g,
                                                                    const workload& w,
                                                                    double minibatches, int ranks);
// How a grid reads a layer-wise hop's rows: cut to each rank's columns at
// the rows' owners (1.5D teams and 2D/3D fibers of more than one rank,
// --draw-at owner), or whole to every rank; and whether the ranks then
// gather the block entries (when cut, and always for FastGCN on a sharded
// grid, which has no whole graph to extract from).
struct layer_wise_path {
  bool cut_at_owners = false;
  bool blocks_gathered = false;
  bool weighted = false;  // whole rows of a weighted A carry its weights too
};
[[nodiscard]] layer_wise_path layer_wise_path_of(const workload& w, grid_kind kind, int ranks,
                                                 int replication);
// Bytes of the rows of one split layer-wise hop, summed over ranks:
//  cut at the owners, 1.5D (T = P/c): 16P(T-1) + (1 - 1/T)(12·P·D + 4E) for
//    the requests with each rank's range, each row's (count, degree) and its
//    columns in the range;
//  cut at the completing rank, 2D/3D: three_d_fetch_bytes of P·D rows and
//    P·E entries, but 8 bytes per row plus the range headers and one copy of
//    the entries back along the fiber:
//    16P(F-1) + 8P(q-1) + P·D(12(1-1/F) + 8(q-1)) + 8·P·E(1-1/q) + 4E(1-1/F);
//  whole rows to every rank: each grid's fetch bytes of P·D rows, P·E entries.
[[nodiscard]] double layer_wise_row_bytes(const layer_wise_load& x, grid_kind kind, int ranks,
                                          int replication, const layer_wise_path& path);
// Bytes of one split layer-wise hop of a step of `minibatches`, summed over
// ranks: the rows, plus on every grid the draw's all-gathers (8 bytes per
// minibatch and rank for the weight rows' sizes, 8 per rank for the
// candidate count, 32 per candidate, each to P - 1 ranks) and the ring
// all-reduce of 4 bytes per source (2(P - 1)/P per rank), plus the block
// entries when gathered (8 bytes each to P - 1 ranks, 8 per rank for sizes).
[[nodiscard]] double layer_wise_hop_bytes(const layer_wise_load& x, grid_kind kind, int ranks,
                                          int replication, const layer_wise_path& path,
                                          double minibatches);

// Sampling as `bulkgnn sample` and `train` run it: each step takes `bulk`
// minibatches and every rank samples its slice (batch / P seeds) of each;
// one row fetch per hop per step. Features and gradients as `bulkgnn train` runs it: every rank
// takes a contiguous 1/P slice of every minibatch; features are partitioned over groups of P/c
// ranks (c = feature replication; c = P means replicated).
[[nodiscard]] prediction predict(const graph_stats& g, const workload& w, grid_kind kind, int ranks,
                                 int replication, int feature_replication = 1);

// The separate terms, for tests and the tool.
[[nodiscard]] double sampling_bytes(const graph_stats& g, const workload& w, grid_kind kind,
                                    int ranks, int replication);
[[nodiscard]] double feature_bytes(const graph_stats& g, const workload& w, int ranks,
                                   int feature_replication);
[[nodiscard]] double gradient_bytes(const graph_stats& g, const workload& w, int ranks);

[[nodiscard]] std::int64_t minibatches_per_epoch(const graph_stats& g, const workload& w);

}  // namespace bulkgnn::distributed::cost
