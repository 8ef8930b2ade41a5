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

// The distinct vertices of a frontier, sorted.
std::vector<vertex_t> distinct_sorted(std::span<const vertex_t> vertices) {
  std::vector<vertex_t> distinct(vertices.begin(), vertices.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

// The rows of Q for layer-wise sampling: row j holds, for each vertex u of
// segment j (ascending), the weight Â(u,·)² = 1/(deg(u)+1)² of A + I's row u.
// Columns are global ids; `rows_of_frontier` holds the rows of `distinct`.
csr_matrix frontier_selection(const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct,
                              const gathered_rows& rows_of_frontier, vertex_t num_vertices) {
  csr_matrix q;
  q.rows = frontier.segments();
  q.cols = num_vertices;
  q.indptr.assign(frontier.offsets.begin(), frontier.offsets.end());
  q.indices = frontier.vertices;
  q.values.resize(q.indices.size());
  for (std::int64_t j = 0; j < q.rows; ++j)
    std::sort(q.indices.begin() + q.indptr[j], q.indices.begin() + q.indptr[j + 1]);
  for (std::size_t e = 0; e < q.indices.size(); ++e) {
    const auto at = std::lower_bound(distinct.begin(), distinct.end(), q.indices[e]);
    const auto row = rows_of_frontier.row_of[static_cast<std::size_t>(at - distinct.begin())];
    const double degree = static_cast<double>(rows_of_frontier.rows.degree(row)) + 1.0;
    q.values[e] = static_cast<float>(1.0 / (degree * degree));
  }
  return q;
}

// Q with its columns renamed from vertex ids to rows of `rows_of_frontier`,
// an order-preserving renaming, so Q·A sums in the same order either way.
csr_matrix select_gathered_rows(csr_matrix q, std::span<const vertex_t> distinct,
                                const gathered_rows& rows_of_frontier) {
  for (auto& column : q.indices) {
    const auto at = std::lower_bound(distinct.begin(), distinct.end(), column);
    column = rows_of_frontier.row_of[static_cast<std::size_t>(at - distinct.begin())];
  }
  q.cols = rows_of_frontier.rows.rows;
  return q;
}

// Fetched rows of `distinct` with the self loop (u, u) inserted where a row
// lacks it, and the frontier renamed to those rows: extracting blocks from
// these without adding self loops gives what extract_blocks with
// add_self_loops gives on the whole graph.
struct rows_with_self_loops {
  csr_matrix rows;
  segmented_vertices frontier;
};

rows_with_self_loops add_self_loops(const gathered_rows& fetched,
                                    std::span<const vertex_t> distinct,
                                    const segmented_vertices& frontier) {
  rows_with_self_loops out;
  out.rows.rows = static_cast<std::int64_t>(distinct.size());
  out.rows.cols = fetched.rows.cols;
  out.rows.indptr.reserve(distinct.size() + 1);
  for (std::size_t i = 0; i < distinct.size(); ++i) {
    const auto row = fetched.rows.row(fetched.row_of[i]);
    const vertex_t u = distinct[i];
    out.rows.indices.insert(out.rows.indices.end(), row.begin(), row.end());
    // Last, where extract_blocks places the self loop it adds.
    if (std::find(row.begin(), row.end(), u) == row.end()) out.rows.indices.push_back(u);
    out.rows.indptr.push_back(static_cast<edge_t>(out.rows.indices.size()));
  }
  out.frontier.offsets = frontier.offsets;
  out.frontier.vertices.reserve(frontier.vertices.size());
  for (const vertex_t u : frontier.vertices)
    out.frontier.vertices.push_back(static_cast<vertex_t>(
        std::lower_bound(distinct.begin(), distinct.end(), u) - distinct.begin()));
  return out;
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

gathered_rows wrap_fetched_rows(csr_matrix fetched) {
  gathered_rows g;
  g.fetched = true;
  g.fetched_rows = std::move(fetched);
  g.rows = g.fetched_rows.view();
  g.positions.resize(static_cast<std::size_t>(g.fetched_rows.rows));
  std::iota(g.positions.begin(), g.positions.end(), 0);
  g.row_of = g.positions;
  return g;
}

void validate(const sampler_options& options, bool graph_weighted) {
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
  BULKGNN_EXPECTS(!options.weighted || graph_weighted,
                  "--weighted needs edge weights, and this graph has none");
}

bulk_sampler::bulk_sampler(csr_view graph, sampler_options options, executor exec)
    : own_rows_(std::make_unique<local_rows>(graph)),
      rows_(*own_rows_),
      options_(std::move(options)),
      exec_(exec) {
  initialise();
}

bulk_sampler::bulk_sampler(row_source& rows, sampler_options options, executor exec)
    : rows_(rows), options_(std::move(options)), exec_(exec) {
  initialise();
}

void bulk_sampler::initialise() {
  validate(options_, rows_.weighted());
  if (options_.kind == sampler_kind::fastgcn) {
    BULKGNN_EXPECTS(rows_.whole_graph() != nullptr,
                    "--sampler fastgcn needs the whole graph in every process (--grid replicated)");
    segmented_vertices everyone;
    everyone.vertices.resize(static_cast<std::size_t>(rows_.num_vertices()));
    std::iota(everyone.vertices.begin(), everyone.vertices.end(), 0);
    everyone.offsets.push_back(rows_.num_vertices());
    global_column_weights_ = column_weights(everyone);
  }
}

bulk_sample bulk_sampler::sample(const epoch_plan& plan, std::int64_t first_minibatch,
                                 std::int64_t count) {
  BULKGNN_EXPECTS(
      first_minibatch >= 0 && count > 0 && first_minibatch + count <= plan.num_minibatches(),
      "bulk_sampler::sample: minibatches [{}, {}) outside the epoch's {}", first_minibatch,
      first_minibatch + count, plan.num_minibatches());
  segmented_vertices seeds;
  std::vector<std::int64_t> ids;
  for (std::int64_t j = 0; j < count; ++j) {
    seeds.push_segment(plan.seeds(first_minibatch + j));
    ids.push_back(first_minibatch + j);
  }
  return sample(plan.epoch(), std::move(seeds), ids);
}

bulk_sample bulk_sampler::sample(std::uint32_t epoch, segmented_vertices seeds,
                                 std::span<const std::int64_t> minibatch_ids) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(minibatch_ids.size()) == seeds.segments(),
                  "bulk_sampler::sample: {} minibatch ids for {} seed segments",
                  minibatch_ids.size(), seeds.segments());
  for (const auto id : minibatch_ids)
    BULKGNN_EXPECTS(id >= 0 && id <= 0xFFFFFFFFll, "bulk_sampler::sample: minibatch id {}", id);
  for (const vertex_t v : seeds.vertices)
    BULKGNN_EXPECTS(v >= 0 && v < rows_.num_vertices(),
                    "seed vertex {} is outside the graph's {} vertices", v, rows_.num_vertices());
  bulk_sample bulk;
  bulk.minibatch_ids.assign(minibatch_ids.begin(), minibatch_ids.end());
  bulk.seeds = std::move(seeds);
  const segmented_vertices* frontier = &bulk.seeds;
  for (std::size_t hop = 0; hop < options_.fanouts.size(); ++hop) {
    const auto h = static_cast<std::uint32_t>(hop);
    if (options_.kind == sampler_kind::node_wise)
      bulk.layers.push_back(sample_node_wise(*frontier, minibatch_ids, epoch, h));
    else
      bulk.layers.push_back(sample_layer_wise(*frontier, minibatch_ids, epoch, h));
    frontier = &bulk.layers.back().sources;
  }
  return bulk;
}

sampled_layer bulk_sampler::sample_node_wise(const segmented_vertices& frontier,
                                             std::span<const std::int64_t> minibatch_ids,
                                             std::uint32_t epoch, std::uint32_t hop) {
  std::vector<std::uint32_t> minibatch_of_row(frontier.vertices.size());
  for (std::int64_t j = 0; j < frontier.segments(); ++j)
    std::fill(minibatch_of_row.begin() + frontier.offsets[j],
              minibatch_of_row.begin() + frontier.offsets[j + 1],
              static_cast<std::uint32_t>(minibatch_ids[j]));
  const kernels::row_sampling_options draw{
      .fanout = options_.fanouts[hop],
      .mode = options_.replacement,
      .weights = options_.weighted ? kernels::weighting::by_value : kernels::weighting::uniform};
  const kernels::row_streams streams{options_.seed, epoch, hop, minibatch_of_row,
                                     frontier.vertices};
  csr_matrix drawn;
  {
    const auto rows = fetch_rows(frontier.vertices);
    scoped_stage stage(times_, "sample_rows");
    drawn = kernels::sample_rows(exec_, rows.rows, rows.row_of, streams, draw);
  }
  scoped_stage stage(times_, "relabel");
  auto relabelled = kernels::relabel_by_segment(exec_, frontier, drawn.view());
  return {std::move(relabelled.sources), std::move(relabelled.blocks), frontier.offsets};
}

gathered_rows bulk_sampler::fetch_rows(std::span<const vertex_t> vertices) {
  scoped_stage stage(times_, "fetch_rows");
  return rows_.rows(vertices);
}

csr_matrix bulk_sampler::column_weights(const segmented_vertices& frontier) {
  const auto distinct = distinct_sorted(frontier.vertices);
  const auto rows = fetch_rows(distinct);
  return column_weights(frontier, distinct, rows);
}

csr_matrix bulk_sampler::column_weights(const segmented_vertices& frontier,
                                        std::span<const vertex_t> distinct,
                                        const gathered_rows& rows) {
  scoped_stage stage(times_, "spgemm");
  const csr_matrix q = frontier_selection(frontier, distinct, rows, rows_.num_vertices());
  const csr_matrix qa =
      kernels::spgemm(exec_, select_gathered_rows(q, distinct, rows).view(), pattern_of(rows.rows));
  return kernels::add(exec_, qa.view(), q.view());
}

sampled_layer bulk_sampler::sample_layer_wise(const segmented_vertices& frontier,
                                              std::span<const std::int64_t> minibatch_ids,
                                              std::uint32_t epoch, std::uint32_t hop) {
  const std::int64_t count = frontier.segments();
  const bool global = options_.kind == sampler_kind::fastgcn;
  // LADIES reads the frontier's rows twice (weights, then blocks): fetch once.
  const auto distinct = global ? std::vector<vertex_t>{} : distinct_sorted(frontier.vertices);
  const auto rows = global ? gathered_rows{} : fetch_rows(distinct);
  const csr_matrix local_weights = global ? csr_matrix{} : column_weights(frontier, distinct, rows);
  const csr_matrix& weights = global ? global_column_weights_ : local_weights;

  // Minibatch j draws from row j of the weights (LADIES) or from the one
  // global row (FastGCN); its stream is keyed by the minibatch alone, since
  // row j's number depends on the bulk.
  std::vector<vertex_t> weight_row(count);
  std::vector<std::uint32_t> minibatch_of_row(count);
  for (std::int64_t j = 0; j < count; ++j) {
    weight_row[j] = global ? 0 : static_cast<vertex_t>(j);
    minibatch_of_row[j] = static_cast<std::uint32_t>(minibatch_ids[j]);
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

  csr_matrix blocks;
  if (!rows.fetched) {
    const csr_view graph = global ? *rows_.whole_graph() : rows.rows;
    blocks = kernels::extract_blocks(exec_, pattern_of(graph), frontier, sources, inverse_p, true);
  } else {
    const auto with_loops = add_self_loops(rows, distinct, frontier);
    blocks = kernels::extract_blocks(exec_, with_loops.rows.view(), with_loops.frontier, sources,
                                     inverse_p, false);
  }
  kernels::normalize_rows(exec_, blocks);
  return {std::move(sources), std::move(blocks), frontier.offsets};
}

}  // namespace bulkgnn::sampler
