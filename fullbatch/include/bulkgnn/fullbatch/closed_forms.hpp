#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/fullbatch/grid.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <cstdint>

namespace bulkgnn::fullbatch {

// The bytes each grid moves, sent and summed over every rank, as the
// communicator counts them (comm/communicator.hpp's rules), for n vertices
// in P equal parts (the block partition with P dividing n, where they are
// exact; elsewhere a model within the parts' imbalance). N = 4·n·w is the
// bytes of one matrix of rows w floats wide; q the grid's side, c its
// replication.
//  - 1d:   (P − 1)·N                      (all-gather of H)
//  - 1.5d: (P/c − 1)·N                    (each part broadcast to the other
//          teams' replica) + P·⌊2(c − 1)·(N·c/P)/c⌋ (each team's ring
//          all-reduce of its partial rows)
//  - 2d:   2(q − 1)·N                     (all-gather in the grid column,
//          reduce-scatter in the grid row)
//  - 3d:   2(q − 1)·N + 2(c − 1)/c·N      (the 2D steps on w/c columns per
//          layer, and the fiber's all-to-all there and back)
//  - sar:  4·B·w, B the boundary rows: Σ over ranks r and parts q ≠ r of the
//          distinct vertices of q that r's rows reference.
// Uncompressed: with --compress the bytes are the encoded ones, which these
// do not model.
// CAGNET's own closed forms count words received per process for the same
// products (1D: n·f, 1.5D: n·f/c + its all-reduce, 2D: n·f/√P and the
// broadcasts of A's tiles, which stationary-A SUMMA does not move).
[[nodiscard]] double product_bytes(const grid_layout& layout, std::int64_t vertices,
                                   std::int64_t width, std::int64_t boundary_rows = 0);

// Part `part`'s share of SAR's boundary B: the distinct vertices of other
// parts that the rows of its vertices reference (the sum over the parts is B).
[[nodiscard]] std::int64_t boundary_rows_of_part(csr_view graph,
                                                 const distributed::vertex_partition& partition,
                                                 int part);

// The bytes of one training epoch by stage: the sparse step of every layer
// forward (widths: the features', then the hidden width), of every layer but
// the first backward (the first needs no input gradient), and the gradient
// all-reduce (over every rank, or over each replica's P/c ranks on 1.5d).
struct epoch_bytes {
  double forward = 0;
  double backward = 0;
  double gradients = 0;
};
[[nodiscard]] epoch_bytes predicted_epoch_bytes(const grid_layout& layout, std::int64_t vertices,
                                                const trainer::model_config& model,
                                                std::int64_t parameters,
                                                std::int64_t boundary_rows = 0);

}  // namespace bulkgnn::fullbatch
