#include "bulkgnn/trainer/share_inference.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/trainer/layers.hpp"

#include <algorithm>

namespace bulkgnn::trainer {

inference_share share_of_rank(std::int64_t num_vertices, int rank, int ranks) {
  return {static_cast<vertex_t>(num_vertices * rank / ranks),
          static_cast<vertex_t>(num_vertices * (rank + 1) / ranks)};
}

namespace {

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
  std::vector<vertex_t> mine(static_cast<std::size_t>(share.last - share.first));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = share.first + static_cast<vertex_t>(i);
  sampler::gathered_rows fetched;
  if (in.parallel->rows != nullptr) {
    fetched = in.parallel->rows->rows(mine);
  } else {
    fetched.rows = in.graph;
    fetched.row_of = mine;
  }
  const auto row = [&](std::size_t i) { return fetched.rows.row(fetched.row_of[i]); };
  share_block out;
  for (std::size_t i = 0; i < mine.size(); ++i)
    for (const vertex_t v : row(i))
      if (v < share.first || v >= share.last) out.outside.push_back(v);
  std::sort(out.outside.begin(), out.outside.end());
  out.outside.erase(std::unique(out.outside.begin(), out.outside.end()), out.outside.end());
  const auto own = static_cast<vertex_t>(mine.size());
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
  m.indptr = buffer<edge_t>(mine.size() + 1);
  m.indptr[0] = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (kind == layer_kind::sage) {
      for (const vertex_t v : row(i)) {
        columns.push_back(renumbered(v));
        values.push_back(1.0f);
      }
    } else {
      merge_self_loop(row(i), mine[i], merged);
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

// Input feature rows of `vertices`, in order.
matrix input_rows(const inference_inputs& in, std::span<const vertex_t> vertices,
                  std::int64_t columns) {
  matrix x(static_cast<std::int64_t>(vertices.size()), columns);
  if (in.parallel->features != nullptr) {
    in.parallel->features->fetch(vertices, x.view());
  } else {
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      const auto row = in.features.row(vertices[i]);
      std::copy(row.begin(), row.end(), x.view().row(static_cast<std::int64_t>(i)).begin());
    }
  }
  if (in.normalizer != nullptr) in.normalizer->apply(vertices, x.view());
  return x;
}

// [this share's rows of h; the rows of h of `outside`, from the ranks whose
// shares hold them] (collective).
matrix with_outside_rows(comm::communicator& ranks, std::int64_t num_vertices,
                         inference_share share, dense_view<const float> h,
                         std::span<const vertex_t> outside) {
  const int count = ranks.size();
  std::vector<std::vector<vertex_t>> requests(static_cast<std::size_t>(count));
  int owner = 0;
  for (const vertex_t v : outside) {  // ascending, so owners ascend too
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
  const auto answered = ranks.all_to_all(replies);
  matrix x(h.rows + static_cast<std::int64_t>(outside.size()), h.cols);
  auto next = std::copy(h.data.begin(), h.data.end(), x.data().begin());
  for (const auto& rows : answered) next = std::copy(rows.begin(), rows.end(), next);
  return x;
}

}  // namespace

matrix predict_share(const gnn_model& model, const inference_inputs& in) {
  BULKGNN_EXPECTS(
      in.parallel != nullptr && in.parallel->ranks != nullptr && in.parallel->sampling != nullptr,
      "predict_share: needs the data-parallel ranks");
  BULKGNN_EXPECTS(model.exec().device() == nullptr,
                  "train_options.eval: full-graph evaluation over data-parallel ranks runs on "
                  "the host only so far; use sampled evaluation");
  const auto share =
      share_of_rank(in.num_vertices, in.parallel->ranks->rank(), in.parallel->ranks->size());
  const auto rows = block_of_share(model.exec(), in, model.config().kind, share);
  std::vector<vertex_t> sources(static_cast<std::size_t>(share.last - share.first));
  for (std::size_t i = 0; i < sources.size(); ++i)
    sources[i] = share.first + static_cast<vertex_t>(i);
  sources.insert(sources.end(), rows.outside.begin(), rows.outside.end());
  matrix x = input_rows(in, sources, model.config().in_features);
  for (int l = 0;; ++l) {
    matrix h = model.forward_layer(l, rows.block, x.view());
    if (l + 1 == model.config().layers) return h;
    x = with_outside_rows(*in.parallel->sampling, in.num_vertices, share, h.view(), rows.outside);
  }
}

}  // namespace bulkgnn::trainer
