#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// Uniform random-walk neighbours: at hop l each frontier vertex v starts
// fanouts[l] independent walks of walk_length steps; a step from u moves to a
// uniform member of N(u) ∪ {u} (A's row with its self loop, so a walk never
// stops and a vertex with no neighbours keeps it). The distinct end vertices
// are v's sampled neighbours, each with its visit count as the block value,
// so an end vertex is taken with probability 1 - (1 - P^L(v,u))^fanout for
// P = D̃⁻¹(A + I). Walk w's step s of vertex v in minibatch m draws from
// the stream (seed, epoch, m, walk_stream_layer(l, s, w), v): keyed by the
// destination like node-wise draws, so a slice of the seeds samples alone.
[[nodiscard]] sampler_entry random_walk_entry();

// The layer field of walk w's step s at hop `hop`: its top bit set, so that
// no walk shares a stream with a node-wise or layer-wise draw (hop < 2^16).
[[nodiscard]] constexpr std::uint32_t walk_stream_layer(std::uint32_t hop, std::uint32_t step,
                                                        std::uint32_t walk) {
  return 0x80000000u | hop << 22 | step << 16 | walk;
}

}  // namespace bulkgnn::sampler
