#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace bulkgnn::sampler {

namespace {

csr_view pattern_of(csr_view graph) {
  graph.values = {};
  return graph;
}

// The rows of Q for layer-wise sampling: row j holds, for each vertex u of
// segment j, the weight Â(u,·)² = 1/(deg(u)+1)² of A + I's row u.
csr_matrix frontier_selection(const segmented_vertices& frontier, csr_view graph) {
  csr_matrix q;
  q.rows = frontier.segments();
  q.cols = graph.rows;
  q.indptr.assign(frontier.offsets.begin(), frontier.offsets.end());
  q.indices = frontier.vertices;
  q.values.resize(q.indices.size());
  for (std::int64_t j = 0; j < q.rows; ++j) {
    auto begin = q.indices.begin() + q.indptr[j];
    auto end = q.indices.begin() + q.indptr[j + 1];
    std::sort(begin, end);
  }
  for (std::size_t e = 0; e < q.indices.size(); ++e) {
    const double degree = static_cast<double>(graph.degree(q.indices[e])) + 1.0;
    q.values[e] = static_cast<float>(1.0 / (degree * degree));
  }
  return q;
}

// relabel_by_segment expects one row per destination; layer-wise sampling
// draws one row per minibatch, which becomes the first row of its segment.
csr_matrix spread_over_first_rows(const csr_matrix& per_segment,
                                  const segmented_vertices& frontier) {
  csr_matrix spread;
  spread.rows = static_cast<std::int64_t>(frontier.vertices.size());
  spread.cols = per_segment.cols;
  spread.indptr.assign(spread.rows + 1, 0);
  for (std::int64_t j = 0; j < frontier.segments(); ++j) {
    BULKGNN_ASSERT(frontier.size(j) > 0);
    spread.indptr[frontier.offsets[j] + 1] = per_segment.indptr[j + 1] - per_segment.indptr[j];
  }
  std::partial_sum(spread.indptr.begin(), spread.indptr.end(), spread.indptr.begin());
  spread.indices = per_segment.indices;
  return spread;
}

}  // namespace

sampler_kind parse_sampler_kind(const std::string& name) {
  if (name == "sage" || name == "node-wise") return sampler_kind::node_wise;
  if (name == "ladies") return sampler_kind::ladies;
  if (name == "fastgcn") return sampler_kind::fastgcn;
  throw option_error("--sampler must be one of sage, ladies, fastgcn; got '" + name + "'");
}

std::string sampler_kind_name(sampler_kind kind) {
  switch (kind) {
    case sampler_kind::node_wise:
      return "sage";
    case sampler_kind::ladies:
      return "ladies";
    case sampler_kind::fastgcn:
      return "fastgcn";
  }
  return "unknown";
}

void validate(const sampler_options& options, csr_view graph) {
  BULKGNN_EXPECTS(!options.fanouts.empty(), "--fanouts must list at least one hop");
  for (std::size_t h = 0; h < options.fanouts.size(); ++h)
    BULKGNN_EXPECTS(
        (options.fanouts[h] > 0 && options.fanouts[h] <= (1 << 24)) || options.fanouts[h] == -1,
        "--fanouts: hop {} has fanout {}; use a count in [1, 2^24] or -1 for all", h,
        options.fanouts[h]);
  BULKGNN_EXPECTS(options.fanouts.size() < 0xFFFFu, "--fanouts: too many hops");
  if (options.kind != sampler_kind::node_wise) {
    BULKGNN_EXPECTS(options.replacement == kernels::replacement::without,
                    "--replace applies to node-wise sampling only");
    BULKGNN_EXPECTS(!options.weighted, "--weighted applies to node-wise sampling only");
  }
  BULKGNN_EXPECTS(!options.weighted || graph.weighted(),
                  "--weighted needs edge weights, and this graph has none");
}

bulk_sampler::bulk_sampler(csr_view graph, sampler_options options, kernels::executor exec)
    : graph_(graph), options_(std::move(options)), exec_(exec) {
  validate(options_, graph_);
  if (options_.kind == sampler_kind::fastgcn) {
    segmented_vertices everyone;
    everyone.vertices.resize(graph_.rows);
    std::iota(everyone.vertices.begin(), everyone.vertices.end(), 0);
    everyone.offsets.push_back(graph_.rows);
    global_column_weights_ = column_weights(everyone);
  }
}

bulk_sample bulk_sampler::sample(const epoch_plan& plan, std::int64_t first_minibatch,
                                 std::int64_t count) {
  BULKGNN_EXPECTS(
      first_minibatch >= 0 && count > 0 && first_minibatch + count <= plan.num_minibatches(),
      "bulk_sampler::sample: minibatches [{}, {}) outside the epoch's {}", first_minibatch,
      first_minibatch + count, plan.num_minibatches());
  bulk_sample bulk;
  bulk.first_minibatch = first_minibatch;
  for (std::int64_t j = 0; j < count; ++j) bulk.seeds.push_segment(plan.seeds(first_minibatch + j));
  for (const vertex_t v : bulk.seeds.vertices)
    BULKGNN_EXPECTS(v >= 0 && v < graph_.rows, "seed vertex {} is outside the graph's {} vertices",
                    v, graph_.rows);

  const segmented_vertices* frontier = &bulk.seeds;
  std::vector<std::uint32_t> minibatch_of_row;
  for (std::size_t hop = 0; hop < options_.fanouts.size(); ++hop) {
    const auto h = static_cast<std::uint32_t>(hop);
    if (options_.kind == sampler_kind::node_wise) {
      minibatch_of_row.resize(frontier->vertices.size());
      for (std::int64_t j = 0; j < count; ++j)
        std::fill(minibatch_of_row.begin() + frontier->offsets[j],
                  minibatch_of_row.begin() + frontier->offsets[j + 1],
                  static_cast<std::uint32_t>(first_minibatch + j));
      bulk.layers.push_back(sample_node_wise(*frontier, minibatch_of_row, plan.epoch(), h));
    } else {
      bulk.layers.push_back(sample_layer_wise(*frontier, first_minibatch, plan.epoch(), h));
    }
    frontier = &bulk.layers.back().sources;
  }
  return bulk;
}

sampled_layer bulk_sampler::sample_node_wise(const segmented_vertices& frontier,
                                             std::span<const std::uint32_t> minibatch_of_row,
                                             std::uint32_t epoch, std::uint32_t hop) {
  const kernels::row_sampling_options draw{
      .fanout = options_.fanouts[hop],
      .mode = options_.replacement,
      .weights = options_.weighted ? kernels::weighting::by_value : kernels::weighting::uniform};
  const kernels::row_streams streams{options_.seed, epoch, hop, minibatch_of_row};
  csr_matrix drawn;
  {
    scoped_stage stage(times_, "sample_rows");
    drawn = kernels::sample_rows(exec_, graph_, frontier.vertices, streams, draw);
  }
  scoped_stage stage(times_, "relabel");
  auto relabelled = kernels::relabel_by_segment(exec_, frontier, drawn.view());
  return {std::move(relabelled.sources), std::move(relabelled.blocks), frontier.offsets};
}

csr_matrix bulk_sampler::column_weights(const segmented_vertices& frontier) {
  scoped_stage stage(times_, "spgemm");
  const csr_matrix q = frontier_selection(frontier, graph_);
  const csr_matrix qa = kernels::spgemm(exec_, q.view(), pattern_of(graph_));
  return kernels::add(exec_, qa.view(), q.view());
}

sampled_layer bulk_sampler::sample_layer_wise(const segmented_vertices& frontier,
                                              std::int64_t first_minibatch, std::uint32_t epoch,
                                              std::uint32_t hop) {
  const std::int64_t count = frontier.segments();
  const bool global = options_.kind == sampler_kind::fastgcn;
  const csr_matrix local_weights = global ? csr_matrix{} : column_weights(frontier);
  const csr_matrix& weights = global ? global_column_weights_ : local_weights;

  // Minibatch j draws from row j of the weights (LADIES) or from the one
  // global row (FastGCN); its stream is keyed by the minibatch alone, since
  // row j's number depends on the bulk.
  std::vector<vertex_t> weight_row(count);
  std::vector<std::uint32_t> minibatch_of_row(count);
  for (std::int64_t j = 0; j < count; ++j) {
    weight_row[j] = global ? 0 : static_cast<vertex_t>(j);
    minibatch_of_row[j] = static_cast<std::uint32_t>(first_minibatch + j);
  }
  const std::vector<vertex_t> zero_key_rows(count, 0);
  csr_matrix drawn;
  {
    scoped_stage stage(times_, "sample_rows");
    drawn = kernels::sample_rows(
        exec_, weights.view(), weight_row,
        kernels::row_streams{options_.seed, epoch, hop, minibatch_of_row, zero_key_rows},
        kernels::row_sampling_options{.fanout = options_.fanouts[hop],
                                      .mode = kernels::replacement::without,
                                      .weights = kernels::weighting::by_value});
  }
  scoped_stage stage(times_, "extract");
  auto sources =
      kernels::relabel_by_segment(exec_, frontier, spread_over_first_rows(drawn, frontier).view())
          .sources;

  // Every source has p > 0: drawn columns by construction, destinations
  // through their self loop. Importance weight 1/p; the row normalisation
  // below absorbs the constant factors of Â and of p's normaliser.
  std::vector<float> inverse_p =
      kernels::lookup_entries(exec_, weights.view(), weight_row, sources);
  for (float& p : inverse_p) {
    BULKGNN_ASSERT(p > 0.0f);
    p = 1.0f / p;
  }

  csr_matrix blocks =
      kernels::extract_blocks(exec_, pattern_of(graph_), frontier, sources, inverse_p, true);
  kernels::normalize_rows(exec_, blocks);
  return {std::move(sources), std::move(blocks), frontier.offsets};
}

}  // namespace bulkgnn::sampler
