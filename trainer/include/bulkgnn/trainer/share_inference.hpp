#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <cstdint>
#include <vector>

namespace bulkgnn::trainer {

// The vertices [first, last) whose outputs rank `rank` of `ranks` computes in
// a full-graph inference: contiguous ranges of nearly n / ranks.
struct inference_share {
  vertex_t first = 0;
  vertex_t last = 0;
};
[[nodiscard]] inference_share share_of_rank(std::int64_t num_vertices, int rank, int ranks);

// Where a rank's share of a full-graph inference reads what it does not hold:
// rows of A through parallel.rows (else `graph`), input feature rows through
// parallel.features (else `features`, normalised by `normalizer` if given).
struct inference_inputs {
  const data_parallel* parallel = nullptr;
  csr_view graph;
  dense_view<const float> features;
  const loader::row_normalizer* normalizer = nullptr;
  std::int64_t num_vertices = 0;
};

// The logits of this rank's share (share_of_rank over parallel.ranks), layer
// by layer over whole neighbourhoods: the share's rows of A are fetched once,
// the input rows of its sources once, and before each further layer the
// hidden rows of the sources other ranks computed, all-to-alls each way over
// parallel.sampling (else parallel.ranks; collective over the ranks). Bit for bit the rows
// predict_full_graph computes for the share: each row sums the same entries
// in the same order. Host executors only.
[[nodiscard]] matrix predict_share(const gnn_model& model, const inference_inputs& inputs);

// The logits of every vertex for one process whose model executor cannot
// hold the whole graph or feature table (a GPU): layer by layer over pieces
// of rows_per_piece consecutive vertices. Each piece's rows of the
// aggregation (built once on the host from inputs.graph) and the rows of the
// layer's input that they read are placed in the executor's memory, and the
// piece's outputs come back to a host matrix, the next layer's input; the
// executor holds one piece at a time, the host two n-row matrices. Bit for
// bit predict_full_graph's rows: each sums the same entries in the same
// order. inputs.parallel must be null; the result is in host memory.
[[nodiscard]] matrix predict_in_pieces(const gnn_model& model, const inference_inputs& inputs,
                                       std::int64_t rows_per_piece);

// predict_in_pieces' pieces, kept: an evaluation every few epochs builds the
// pieces' blocks from the graph once, not every time.
class inference_pieces {
 public:
  // The pieces of rows_per_piece consecutive vertices of inputs.graph, for
  // layers of `kind`; built on the host with `threads` (0: every core).
  inference_pieces(const inference_inputs& inputs, layer_kind kind, std::int64_t rows_per_piece,
                   int threads = 0);
  ~inference_pieces();
  inference_pieces(inference_pieces&&) noexcept;
  inference_pieces& operator=(inference_pieces&&) noexcept;

  // predict_in_pieces over these pieces: `inputs` the ones they were built
  // from, `model`'s layers of their kind.
  [[nodiscard]] matrix predict(const gnn_model& model, const inference_inputs& inputs) const;

 private:
  struct piece;
  std::vector<piece> pieces_;
  layer_kind kind_;
};

}  // namespace bulkgnn::trainer
