#include "bulkgnn/kernels/rules/node2vec.hpp"

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void node2vec_walks(csr_view graph, std::span<const vertex_t> starts,
                    const node2vec_options& options, std::span<vertex_t> out) {
  const auto width = static_cast<std::size_t>(options.length + 1);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    philox_stream rng(rng_key{options.seed, options.epoch, no_minibatch, node2vec_stream,
                              static_cast<std::uint32_t>(i)});
    rules::node2vec_walk(graph.indptr.data(), graph.indices.data(), starts[i], options.length,
                         options.p, options.q, rng, out.data() + i * width);
  }
}

}  // namespace bulkgnn::kernels::reference
