#include "bulkgnn/trainer/share_inference.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "bulkgnn/trainer/placement.hpp"

#include <algorithm>
#include <optional>

namespace bulkgnn::trainer {

inference_share share_of_rank(std::int64_t num_vertices, int rank, int ranks) {
  return {static_cast<vertex_t>(num_vertices * rank / ranks),
          static_cast<vertex_t>(num_vertices * (rank + 1) / ranks)};
}

namespace {

// Rows moved per collective step: bounds the exchange buffers (a rank's share
// of an R-MAT graph reaches nearly every vertex) to this many rows each way.
constexpr std::int64_t rows_per_step = std::int64_t{1} << 16;

// Calls step(begin, end) over [0, count) in pieces of rows_per_step, as many
// times on every rank of `ranks` (collective steps need every rank; some get
// empty pieces). Without ranks, one process alone.
template <class Step>
void in_steps(comm::communicator* ranks, std::int64_t count, const Step& step) {
  auto steps = (count + rows_per_step - 1) / rows_per_step;
  if (ranks != nullptr) steps = ranks->all_reduce(steps, comm::reduce_op::max);
  for (std::int64_t k = 0; k < steps; ++k) {
    const auto begin = std::min(count, k * rows_per_step);
    step(begin, std::min(count, begin + rows_per_step));
  }
}

// The ranks that share an inference; nullptr for a process alone.
comm::communicator* ranks_of(const inference_inputs& in) {
  return in.parallel != nullptr ? in.parallel->ranks : nullptr;
}

// The share's rows of A, vertex first + r in row r, with A's column ids,
// fetched in steps (collective).
csr_matrix rows_of_share(const inference_inputs& in, inference_share share) {
  std::vector<edge_t> indptr{0};
  std::vector<vertex_t> indices;
  in_steps(ranks_of(in), share.last - share.first, [&](std::int64_t begin, std::int64_t end) {
    std::vector<vertex_t> piece(static_cast<std::size_t>(end - begin));
    for (std::size_t i = 0; i < piece.size(); ++i)
      piece[i] = share.first + static_cast<vertex_t>(begin) + static_cast<vertex_t>(i);
    sampler::gathered_rows fetched;
    if (in.parallel != nullptr && in.parallel->rows != nullptr) {
      fetched = in.parallel->rows->rows(piece);
    } else {
      fetched.rows = in.graph;
      fetched.row_of = piece;
    }
    for (std::size_t i = 0; i < piece.size(); ++i) {
      const auto row = fetched.rows.row(fetched.row_of[i]);
      indices.insert(indices.end(), row.begin(), row.end());
      indptr.push_back(static_cast<edge_t>(indices.size()));
    }
  });
  csr_matrix m;
  m.rows = share.last - share.first;
  m.cols = in.num_vertices;
  m.indptr = buffer<edge_t>(indptr.size());
  std::copy(indptr.begin(), indptr.end(), m.indptr.begin());
  m.indices = buffer<vertex_t>(indices.size());
  std::copy(indices.begin(), indices.end(), m.indices.begin());
  return m;
}

// The share's aggregation block, with columns renumbered: the share's vertices
// first (vertex first + i is column i), then `outside`, the other sources,
// ascending. Each row keeps A's stored order, so the model sums it as
// full_graph_block's row: sage weighs every stored entry 1/degree; gcn
// merges repeated columns and the self loop in place (sorted rows, as
// kernels::add does) into counts, then normalises them to sum 1.
struct share_block {
  aggregation_block block;
  std::vector<vertex_t> outside;
};

// Row `u`'s (column, count) entries, A's repeated columns and the self loop
// merged, in column order.
void merge_self_loop(std::span<const vertex_t> row, vertex_t u,
                     std::vector<std::pair<vertex_t, float>>& out) {
  // As kernels::add, which full_graph_block merges the self loops with.
  BULKGNN_EXPECTS(std::is_sorted(row.begin(), row.end()),
                  "full_graph_block: the row of vertex {} does not have sorted columns (a gcn "
                  "layer adds each self loop in column order)",
                  u);
  out.clear();
  bool self_done = false;
  for (const vertex_t v : row) {
    if (!self_done && u < v) {
      out.emplace_back(u, 1.0f);
      self_done = true;
    }
    if (!out.empty() && out.back().first == v)
      out.back().second += 1.0f;
    else
      out.emplace_back(v, v == u ? 2.0f : 1.0f);
    self_done = self_done || v == u;
  }
  if (!self_done) out.emplace_back(u, 1.0f);
}

share_block block_of_share(const executor& exec, const inference_inputs& in, layer_kind kind,
                           inference_share share) {
  const csr_matrix rows_of_a = rows_of_share(in, share);
  const csr_view a = rows_of_a.view();
  const auto own = static_cast<vertex_t>(share.last - share.first);
  const auto row = [&](std::size_t i) { return a.row(static_cast<std::int64_t>(i)); };
  const auto weights = find_layer(kind).full_graph;
  BULKGNN_EXPECTS(weights == adjacency_weights::row_mean ||
                      weights == adjacency_weights::row_mean_with_self_loops,
                  "block_of_share: no block of a share for the {} layer's weights",
                  find_layer(kind).name);
  share_block out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(own); ++i)
    for (const vertex_t v : row(i))
      if (v < share.first || v >= share.last) out.outside.push_back(v);
  std::sort(out.outside.begin(), out.outside.end());
  out.outside.erase(std::unique(out.outside.begin(), out.outside.end()), out.outside.end());
  const auto renumbered = [&](vertex_t v) {
    if (v >= share.first && v < share.last) return v - share.first;
    return own + static_cast<vertex_t>(std::lower_bound(out.outside.begin(), out.outside.end(), v) -
                                       out.outside.begin());
  };
  std::vector<vertex_t> columns;
  std::vector<float> values;
  std::vector<std::pair<vertex_t, float>> merged;
  auto& m = out.block.forward;
  m.rows = own;
  m.cols = own + static_cast<std::int64_t>(out.outside.size());
  m.indptr = buffer<edge_t>(static_cast<std::size_t>(own) + 1);
  m.indptr[0] = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(own); ++i) {
    if (weights == adjacency_weights::row_mean) {
      for (const vertex_t v : row(i)) {
        columns.push_back(renumbered(v));
        values.push_back(1.0f);
      }
    } else {
      merge_self_loop(row(i), share.first + static_cast<vertex_t>(i), merged);
      for (const auto& [v, count] : merged) {
        columns.push_back(renumbered(v));
        values.push_back(count);
      }
    }
    m.indptr[i + 1] = static_cast<edge_t>(columns.size());
  }
  m.indices = buffer<vertex_t>(columns.size());
  std::copy(columns.begin(), columns.end(), m.indices.begin());
  m.values = buffer<float>(values.size());
  std::copy(values.begin(), values.end(), m.values.begin());
  kernels::normalize_rows(exec, m);
  return out;
}

// Input feature rows of `vertices`, in order (collective).
matrix input_rows(const inference_inputs& in, std::span<const vertex_t> vertices,
                  std::int64_t columns) {
  matrix x(static_cast<std::int64_t>(vertices.size()), columns);
  in_steps(ranks_of(in), std::ssize(vertices), [&](std::int64_t begin, std::int64_t end) {
    const auto piece =
        vertices.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
    const dense_view<float> rows{
        end - begin, columns,
        x.data().subspan(static_cast<std::size_t>(begin * columns),
                         static_cast<std::size_t>((end - begin) * columns))};
    if (in.parallel != nullptr && in.parallel->features != nullptr) {
      in.parallel->features->fetch(piece, rows);
    } else {
      for (std::size_t i = 0; i < piece.size(); ++i) {
        const auto row = in.features.row(piece[i]);
        std::copy(row.begin(), row.end(), rows.row(static_cast<std::int64_t>(i)).begin());
      }
    }
    if (in.normalizer != nullptr) in.normalizer->apply(piece, rows);
  });
  return x;
}

// [this share's rows of h; the rows of h of `outside`, from the ranks whose
// shares hold them] (collective).
matrix with_outside_rows(comm::communicator& ranks, std::int64_t num_vertices,
                         inference_share share, dense_view<const float> h,
                         std::span<const vertex_t> outside) {
  const int count = ranks.size();
  matrix x(h.rows + static_cast<std::int64_t>(outside.size()), h.cols);
  auto next = std::copy(h.data.begin(), h.data.end(), x.data().begin());
  in_steps(&ranks, std::ssize(outside), [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::vector<vertex_t>> requests(static_cast<std::size_t>(count));
    int owner = 0;
    for (auto i = begin; i < end; ++i) {  // ascending, so owners ascend too
      const vertex_t v = outside[static_cast<std::size_t>(i)];
      while (v >= share_of_rank(num_vertices, owner, count).last) ++owner;
      requests[owner].push_back(v);
    }
    const auto asked = ranks.all_to_all(requests);
    std::vector<std::vector<float>> replies(static_cast<std::size_t>(count));
    for (int r = 0; r < count; ++r) {
      replies[r].reserve(asked[r].size() * static_cast<std::size_t>(h.cols));
      for (const vertex_t v : asked[r]) {
        BULKGNN_ASSERT(v >= share.first && v < share.last);
        const auto row = h.row(v - share.first);
        replies[r].insert(replies[r].end(), row.begin(), row.end());
      }
    }
    for (const auto& rows : ranks.all_to_all(replies))
      next = std::copy(rows.begin(), rows.end(), next);
  });
  return x;
}

// The vertices a block of `range` reads: its own, then the outside ones.
std::vector<vertex_t> sources_of(inference_share range, std::span<const vertex_t> outside) {
  std::vector<vertex_t> sources(static_cast<std::size_t>(range.last - range.first));
  for (std::size_t i = 0; i < sources.size(); ++i)
    sources[i] = range.first + static_cast<vertex_t>(i);
  sources.insert(sources.end(), outside.begin(), outside.end());
  return sources;
}

// Rows `vertices` of host matrix `h`, in order.
matrix rows_of(dense_view<const float> h, std::span<const vertex_t> vertices) {
  matrix out(std::ssize(vertices), h.cols);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto row = h.row(vertices[i]);
    std::copy(row.begin(), row.end(), out.view().row(static_cast<std::int64_t>(i)).begin());
  }
  return out;
}

}  // namespace

matrix predict_share(const gnn_model& model, const inference_inputs& in) {
  BULKGNN_EXPECTS(in.parallel != nullptr && in.parallel->ranks != nullptr,
                  "predict_share: needs the data-parallel ranks");
  // Shares follow the ranks' order; hidden rows move over the sampling
  // context when it has the same ranks in the same order.
  auto* exchange = in.parallel->sampling;
  if (exchange == nullptr || exchange->size() != in.parallel->ranks->size() ||
      exchange->rank() != in.parallel->ranks->rank())
    exchange = in.parallel->ranks;
  BULKGNN_EXPECTS(model.exec().device() == nullptr,
                  "predict_share: runs on host executors only so far");
  const auto share =
      share_of_rank(in.num_vertices, in.parallel->ranks->rank(), in.parallel->ranks->size());
  const auto rows = block_of_share(model.exec(), in, model.config().kind, share);
  const auto sources = sources_of(share, rows.outside);
  // Evaluation's fetches are not the training's accesses.
  struct uncounted_fetches {
    loader::feature_fetcher* fetcher;
    explicit uncounted_fetches(loader::feature_fetcher* f) : fetcher(f) {
      if (fetcher != nullptr) fetcher->count_fetches(false);
    }
    ~uncounted_fetches() {
      if (fetcher != nullptr) fetcher->count_fetches(true);
    }
    uncounted_fetches(const uncounted_fetches&) = delete;
    uncounted_fetches& operator=(const uncounted_fetches&) = delete;
  };
  matrix x;
  {
    const uncounted_fetches pause(in.parallel->features);
    x = input_rows(in, sources, model.config().in_features);
  }
  for (int l = 0;; ++l) {
    matrix h = model.forward_layer(l, rows.block, x.view());
    if (l + 1 == model.config().layers) return h;
    x = with_outside_rows(*exchange, in.num_vertices, share, h.view(), rows.outside);
  }
}

struct inference_pieces::piece {
  inference_share range;
  aggregation_block block;        // the range's rows of the aggregation
  std::vector<vertex_t> outside;  // the sources outside the range they read
};

inference_pieces::inference_pieces(const inference_inputs& in, layer_kind kind,
                                   std::int64_t rows_per_piece, int threads)
    : kind_(kind) {
  BULKGNN_EXPECTS(in.parallel == nullptr,
                  "predict_in_pieces: evaluates the whole graph in one process (several ranks "
                  "share an inference with predict_share)");
  BULKGNN_EXPECTS(rows_per_piece > 0, "predict_in_pieces: rows_per_piece is {}, not positive",
                  rows_per_piece);
  BULKGNN_EXPECTS(in.graph.rows == in.num_vertices && in.features.rows == in.num_vertices,
                  "predict_in_pieces: the graph has {} rows and the features {}, not {}",
                  in.graph.rows, in.features.rows, in.num_vertices);
  const executor host(backend::cpu, threads);
  for (std::int64_t first = 0; first < in.num_vertices; first += rows_per_piece) {
    const inference_share range{
        static_cast<vertex_t>(first),
        static_cast<vertex_t>(std::min(in.num_vertices, first + rows_per_piece))};
    auto [block, outside] = block_of_share(host, in, kind, range);
    pieces_.push_back({range, std::move(block), std::move(outside)});
  }
}

inference_pieces::~inference_pieces() = default;
inference_pieces::inference_pieces(inference_pieces&&) noexcept = default;
inference_pieces& inference_pieces::operator=(inference_pieces&&) noexcept = default;

matrix inference_pieces::predict(const gnn_model& model, const inference_inputs& in) const {
  BULKGNN_EXPECTS(model.config().kind == kind_,
                  "predict_in_pieces: pieces built for one kind of layer, a model of another");
  const executor& exec = model.exec();
  matrix x;  // the current layer's input, every vertex's row, on the host
  for (int l = 0; l < model.config().layers; ++l) {
    matrix next;
    for (std::size_t k = 0; k < pieces_.size(); ++k) {
      const auto& [range, block, outside] = pieces_[k];
      const auto sources = sources_of(range, outside);
      const matrix rows =
          l == 0 ? input_rows(in, sources, model.config().in_features) : rows_of(x.view(), sources);
      const placed_matrix placed_rows(exec, rows.view());
      std::optional<aggregation_block> placed_block;
      if (needs_placing(exec, memory_space::host))
        placed_block.emplace(aggregation_block{copy_for(exec, block.forward.view()), {}});
      const matrix h =
          model.forward_layer(l, placed_block ? *placed_block : block, placed_rows.view());
      if (k == 0) next = matrix(in.num_vertices, h.cols());
      exec.memory().copy(next.view().row(range.first).data(), h.data().data(),
                         h.data().size_bytes());
    }
    x = std::move(next);
  }
  return x;
}

matrix predict_in_pieces(const gnn_model& model, const inference_inputs& in,
                         std::int64_t rows_per_piece) {
  // Pieces are built on the host, with the model's threads where it is there
  // (a cuda executor's are 0: every core).
  return inference_pieces(in, model.config().kind, rows_per_piece, model.exec().threads())
      .predict(model, in);
}

}  // namespace bulkgnn::trainer
