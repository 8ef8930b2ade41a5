#include "bulkgnn/trainer/layers.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <array>
#include <cmath>

#include "elementwise.hpp"

namespace bulkgnn::trainer {

namespace {

void check_block(csr_view block, std::string_view function) {
  const auto problem = find_csr_problem(block);
  BULKGNN_EXPECTS(problem.empty(), "{}: block: {}", function, problem);
  BULKGNN_EXPECTS(block.rows <= block.cols,
                  "{}: block has {} destinations but only {} sources; destinations must be "
                  "the first sources",
                  function, block.rows, block.cols);
}

csr_matrix pattern_copy(csr_view m) {
  csr_matrix copy;
  copy.rows = m.rows;
  copy.cols = m.cols;
  copy.indptr.resize(m.indptr.size());
  for (std::size_t r = 0; r < m.indptr.size(); ++r) copy.indptr[r] = m.indptr[r] - m.indptr[0];
  copy.indices.assign(m.indices.begin(), m.indices.end());
  return copy;
}

csr_matrix row_means(const kernels::executor& exec, csr_view m) {
  csr_matrix mean = pattern_copy(m);
  mean.values.assign(mean.indices.size(), 1.0f);
  kernels::normalize_rows(exec, mean);
  return mean;
}

csr_matrix identity(std::int64_t n) {
  csr_matrix id;
  id.rows = n;
  id.cols = n;
  id.indptr.resize(static_cast<std::size_t>(n + 1));
  id.indices.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v <= n; ++v) id.indptr[v] = v;
  for (std::int64_t v = 0; v < n; ++v) id.indices[v] = static_cast<vertex_t>(v);
  return id;
}

aggregation_block with_transpose(const kernels::executor& exec, csr_matrix forward,
                                 bool with_backward) {
  aggregation_block block{.forward = std::move(forward), .backward = {}};
  if (with_backward) block.backward = kernels::transpose(exec, block.forward.view());
  return block;
}

void relu(dense_view<float> x) {
  detail::for_pieces(static_cast<std::int64_t>(x.data.size()), 1,
                     [&](std::int64_t begin, std::int64_t end) {
                       float* v = x.data.data();
                       for (std::int64_t i = begin; i < end; ++i) v[i] = std::max(v[i], 0.0f);
                     });
}

// Dropout keeps an entry when its 16 random bits are at least p·2^16, so one
// 32-bit word decides two entries (low half first). p is thus resolved to
// 1/65536 and the kept entries are scaled by 1/(1 − that p), which keeps the
// layer unbiased. Masks are built branch-free in a small buffer, since
// keep-or-drop is a coin flip no branch predictor can follow; drawing the
// words is most of the cost, which 16 bits per entry halves.
struct dropout_threshold {
  std::uint32_t bits;  // p·2^16, rounded
  float scale;         // 1 / (1 − bits/2^16)
};

dropout_threshold threshold_for(float p) {
  const auto bits = static_cast<std::uint32_t>(std::lround(std::ldexp(static_cast<double>(p), 16)));
  return {bits, static_cast<float>(1.0 / (1.0 - std::ldexp(static_cast<double>(bits), -16)))};
}

void relu_and_drop_rows(dense_view<float> x, float p, dropout_key key, std::uint32_t layer,
                        std::int64_t begin, std::int64_t end) {
  constexpr std::int64_t chunk = 256;  // entries per mask buffer; even
  const auto threshold = threshold_for(p);
  std::array<std::uint32_t, chunk / 2> words;
  std::array<float, chunk> mask;
  for (std::int64_t r = begin; r < end; ++r) {
    const auto row_key = static_cast<std::uint32_t>(
        key.row_ids.empty() ? r : key.row_ids[static_cast<std::size_t>(r)]);
    philox_stream stream(rng_key{key.seed, key.epoch, key.minibatch, layer, row_key});
    float* row = x.row(r).data();
    for (std::int64_t first = 0; first < x.cols; first += chunk) {
      const std::int64_t n = std::min(chunk, x.cols - first);
      stream.next_u32s(words.data(), static_cast<std::size_t>((n + 1) / 2));
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint32_t bits = (words[j / 2] >> (16 * (j % 2))) & 0xFFFFu;
        mask[j] = threshold.scale * static_cast<float>(bits >= threshold.bits);
      }
      for (std::int64_t j = 0; j < n; ++j)
        row[first + j] = std::max(row[first + j], 0.0f) * mask[j];
    }
  }
}

}  // namespace

layer_kind parse_layer_kind(const std::string& name) {
  if (name == "sage") return layer_kind::sage;
  if (name == "gcn") return layer_kind::gcn;
  throw option_error(fmt::format("--model: unknown layer kind '{}' (expected sage or gcn)", name));
}

std::string layer_kind_name(layer_kind kind) { return kind == layer_kind::sage ? "sage" : "gcn"; }

aggregation_block make_aggregation_block(const kernels::executor& exec, const csr_matrix& block,
                                         layer_kind kind, bool with_backward) {
  check_block(block.view(), "make_aggregation_block");
  if (kind == layer_kind::sage)
    return with_transpose(exec, row_means(exec, block.view()), with_backward);
  BULKGNN_EXPECTS(block.view().weighted(),
                  "make_aggregation_block: a gcn layer needs a weighted block (LADIES or FastGCN "
                  "sampling), got a pattern");
  return with_transpose(exec, block, with_backward);
}

aggregation_block full_graph_block(const kernels::executor& exec, csr_view graph, layer_kind kind,
                                   bool with_backward) {
  BULKGNN_EXPECTS(graph.rows == graph.cols, "full_graph_block: graph is {}x{}, not square",
                  graph.rows, graph.cols);
  const auto problem = find_csr_problem(graph);
  BULKGNN_EXPECTS(problem.empty(), "full_graph_block: graph: {}", problem);
  graph.values = {};
  if (kind == layer_kind::sage) return with_transpose(exec, row_means(exec, graph), with_backward);
  csr_matrix normalised = kernels::add(exec, graph, identity(graph.rows).view());
  kernels::normalize_rows(exec, normalised);
  return with_transpose(exec, std::move(normalised), with_backward);
}

void relu_dropout(dense_view<float> x, float p, std::optional<dropout_key> key, int layer) {
  BULKGNN_EXPECTS(p >= 0.0f && p < 1.0f, "relu_dropout: p = {} is outside [0, 1)", p);
  if (!key || p == 0.0f) {
    relu(x);
    return;
  }
  BULKGNN_EXPECTS(key->row_ids.empty() || static_cast<std::int64_t>(key->row_ids.size()) >= x.rows,
                  "relu_dropout: {} row ids for {} rows", key->row_ids.size(), x.rows);
  const auto stream_layer = dropout_stream_base + static_cast<std::uint32_t>(layer);
  detail::for_pieces(x.rows, x.cols, [&](std::int64_t begin, std::int64_t end) {
    relu_and_drop_rows(x, p, *key, stream_layer, begin, end);
  });
}

void relu_dropout_backward(dense_view<const float> y, float p, bool dropout,
                           dense_view<float> grad) {
  BULKGNN_EXPECTS(y.rows == grad.rows && y.cols == grad.cols,
                  "relu_dropout_backward: output is {}x{} but its gradient is {}x{}", y.rows,
                  y.cols, grad.rows, grad.cols);
  const float scale = dropout && p > 0.0f ? threshold_for(p).scale : 1.0f;
  detail::for_pieces(static_cast<std::int64_t>(y.data.size()), 1,
                     [&](std::int64_t begin, std::int64_t end) {
                       const float* out = y.data.data();
                       float* g = grad.data.data();
                       for (std::int64_t i = begin; i < end; ++i)
                         g[i] = out[i] > 0.0f ? g[i] * scale : 0.0f;
                     });
}

}  // namespace bulkgnn::trainer
