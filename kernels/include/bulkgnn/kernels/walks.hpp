#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::kernels {

// The layer of the walks' Philox streams, apart from the samplers' hops and
// dropout's.
inline constexpr std::uint32_t node2vec_stream = 0x30000;

struct node2vec_options {
  std::int64_t length = 20;  // steps of each walk
  double p = 1;              // return parameter: weight 1/p for stepping back
  double q = 1;              // in-out parameter: weight 1/q for moving away
  std::uint32_t seed = 0;
  std::uint32_t epoch = 0;
};

// node2vec's second-order random walks (Grover & Leskovec, KDD 2016), as an
// embedding trainer (DeepWalk with p = q = 1) takes them: row i of the
// starts.size() × (length + 1) result is the walk from starts[i]
// (rules/node2vec.hpp: the first step uniform; from v, having come from t,
// neighbour x weighted 1/p if x is t, 1 if x neighbours t, 1/q otherwise; a
// vertex without neighbours repeated to the end, as torch_cluster does). A vertex's neighbours are its row of
// `graph` (for the in-neighbour CSR of an undirected graph, its neighbours),
// rows sorted ascending. Walk i draws from the stream keyed {seed, epoch,
// no_minibatch, node2vec_stream, i}, so the walks depend on neither the
// thread count nor the back end. Host back ends only so far. option_error
// naming node2vec_options' field for a length outside [1, 65535] or p, q
// that are not finite and positive.
[[nodiscard]] buffer<vertex_t> node2vec_walks(const executor& exec, csr_view graph,
                                              std::span<const vertex_t> starts,
                                              const node2vec_options& options);

}  // namespace bulkgnn::kernels
