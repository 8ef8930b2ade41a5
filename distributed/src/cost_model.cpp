#include "bulkgnn/distributed/cost_model.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace bulkgnn::distributed::cost {

namespace {

// Inverse of the standard normal CDF by bisection on erfc: only called for a
// few dozen quantiles, so simplicity beats speed.
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

// P(v not reached) after `draws` independent degree-biased draws.
double missed(double in_degree, double edges, double draws) {
  if (in_degree <= 0 || edges <= 0 || draws <= 0) return 1.0;
  const double w = std::min(1.0, in_degree / edges);
  if (w >= 1.0) return 0.0;
  return std::exp(draws * std::log1p(-w));
}

double drawn_from(double fanout, double degree) {
  return fanout < 0 ? degree : std::min(fanout, degree);
}

// Sizes of the minibatches of one epoch: full batches, then the remainder.
std::vector<double> minibatch_sizes(const graph_stats& g, const workload& w) {
  const auto count = minibatches_per_epoch(g, w);
  std::vector<double> sizes(static_cast<std::size_t>(count), static_cast<double>(w.batch_size));
  const std::int64_t full = g.train / w.batch_size;
  if (count > full) sizes.back() = static_cast<double>(g.train - full * w.batch_size);
  return sizes;
}

bool is_square(int n) {
  const int root = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
  return root * root == n;
}

}  // namespace

graph_stats synthetic_stats(std::int64_t nodes, std::int64_t edges, std::int64_t train,
                            double second_moment, int buckets) {
  if (nodes <= 0 || edges < 0 || buckets <= 0)
    throw std::invalid_argument("synthetic_stats: need nodes > 0, edges >= 0, buckets > 0");
  graph_stats g{.nodes = nodes, .edges = edges, .train = train > 0 ? train : nodes, .groups = {}};
  const double mean = static_cast<double>(edges) / static_cast<double>(nodes);
  if (mean <= 0) {
    g.groups.push_back({.in_degree = 0, .out_degree = 0, .train = true, .count = double(nodes)});
    return g;
  }
  const double m2 = second_moment > 0 ? std::max(second_moment, mean * mean) : 2 * mean * mean;
  const double sigma2 = std::log(m2 / (mean * mean));
  const double mu = std::log(mean) - sigma2 / 2;
  const double per_bucket = static_cast<double>(nodes) / buckets;
  const double train_share = static_cast<double>(g.train) / static_cast<double>(nodes);
  std::vector<double> degrees(static_cast<std::size_t>(buckets));
  double total = 0;
  for (int i = 0; i < buckets; ++i) {
    degrees[i] = std::exp(mu + std::sqrt(sigma2) * normal_quantile((i + 0.5) / buckets));
    total += degrees[i] * per_bucket;
  }
  // Quantile midpoints under-represent the tail: rescale so the degrees sum
  // to nnz exactly (keeps E[d] right; E[d²] comes out slightly low).
  for (double& d : degrees) d *= static_cast<double>(edges) / total;
  for (const double d : degrees) {
    if (train_share > 0)
      g.groups.push_back(
          {.in_degree = d, .out_degree = d, .train = true, .count = per_bucket * train_share});
    if (train_share < 1)
      g.groups.push_back({.in_degree = d,
                          .out_degree = d,
                          .train = false,
                          .count = per_bucket * (1 - train_share)});
  }
  return g;
}

graph_stats measured_stats(std::int64_t rows, const std::int64_t* indptr,
                           const std::int32_t* indices, const std::vector<bool>& train_mask) {
  graph_stats g;
  g.nodes = rows;
  g.edges = indptr[rows] - indptr[0];
  std::vector<std::int64_t> in(static_cast<std::size_t>(rows), 0);
  for (std::int64_t e = indptr[0]; e < indptr[rows]; ++e) ++in[indices[e - indptr[0]]];
  std::map<std::tuple<std::int64_t, std::int64_t, bool>, double> counts;
  for (std::int64_t v = 0; v < rows; ++v) {
    const bool train = train_mask.empty() || train_mask[v];
    g.train += train ? 1 : 0;
    ++counts[{in[v], indptr[v + 1] - indptr[v], train}];
  }
  // Reciprocity: binary search of (v, u) in sorted copies of the rows.
  std::vector<std::int32_t> sorted(indices, indices + g.edges);
  for (std::int64_t v = 0; v < rows; ++v)
    std::sort(sorted.begin() + (indptr[v] - indptr[0]),
              sorted.begin() + (indptr[v + 1] - indptr[0]));
  std::int64_t reciprocated = 0;
  for (std::int64_t u = 0; u < rows; ++u)
    for (std::int64_t e = indptr[u] - indptr[0]; e < indptr[u + 1] - indptr[0]; ++e) {
      const auto v = sorted[e];
      reciprocated += std::binary_search(sorted.begin() + (indptr[v] - indptr[0]),
                                         sorted.begin() + (indptr[v + 1] - indptr[0]),
                                         static_cast<std::int32_t>(u));
    }
  g.reciprocity = g.edges > 0 ? static_cast<double>(reciprocated) / g.edges : 1;
  for (const auto& [key, count] : counts)
    g.groups.push_back({.in_degree = static_cast<double>(std::get<0>(key)),
                        .out_degree = static_cast<double>(std::get<1>(key)),
                        .train = std::get<2>(key),
                        .count = count});
  return g;
}

std::int64_t model_layers(const workload& w) {
  return w.layers > 0 ? w.layers : static_cast<std::int64_t>(w.fanouts.size());
}

namespace {

// Input and output width of each layer, the input's first.
std::vector<std::pair<double, double>> layer_widths(const workload& w) {
  std::vector<std::pair<double, double>> widths;
  const std::int64_t layers = model_layers(w);
  for (std::int64_t l = 0; l < layers; ++l)
    widths.emplace_back(static_cast<double>(l == 0 ? w.features : w.hidden),
                        static_cast<double>(l + 1 == layers ? w.classes : w.hidden));
  return widths;
}

// A layer from `in` to `out` columns over `rows` output vertices holds the
// aggregated input and its gradient, and the output, its gradient and the
// dropout mask, in floats.
double layer_bytes(double rows, double in, double out) {
  return sizeof(float) * rows * (2 * in + 3 * out);
}

}  // namespace

std::int64_t model_parameters(const workload& w) {
  if (w.parameters > 0) return w.parameters;
  std::int64_t total = 0;
  for (const auto& [in, out] : layer_widths(w))
    total += static_cast<std::int64_t>((w.root_weight ? 2 : 1) * in * out + out);
  return total;
}

std::vector<double> minibatch_vertex_bound(const workload& w, std::int64_t nodes) {
  const auto n = static_cast<double>(nodes);
  std::vector<double> sizes{std::min(n, static_cast<double>(w.batch_size))};
  for (const auto fanout : w.fanouts) {
    const double f = fanout < 0 ? n : static_cast<double>(fanout);
    const double next = w.fanout_per_destination ? sizes.back() * (f + 1) : sizes.back() + f;
    sizes.push_back(std::min(n, next));
  }
  if (w.any_depth) {
    const double seeds = sizes.front();
    sizes.assign(static_cast<std::size_t>(model_layers(w)) + 1, sizes.back());
    sizes.front() = seeds;
  }
  return sizes;
}

training_memory training_memory_of(const workload& w, std::int64_t nodes, bool full_evaluation) {
  const auto widths = layer_widths(w);
  const auto vertices = minibatch_vertex_bound(w, nodes);
  BULKGNN_EXPECTS(vertices.size() == widths.size() + 1,
                  "training_memory_of: {} layers on {} fanouts (only an any-depth sampler's "
                  "layers are not its hops)",
                  widths.size(), w.fanouts.size());
  training_memory m;
  m.model = 4 * sizeof(float) * static_cast<double>(model_parameters(w));
  for (std::size_t l = 0; l < widths.size(); ++l) {
    const auto [in, out] = widths[l];
    // Layer l computes the vertices of hop L-l-1 from those of hop L-l.
    m.minibatch += layer_bytes(vertices[widths.size() - l - 1], in, out);
    if (full_evaluation)
      m.evaluation = std::max(m.evaluation, layer_bytes(static_cast<double>(nodes), in, out));
  }
  return m;
}

std::int64_t minibatches_per_epoch(const graph_stats& g, const workload& w) {
  const std::int64_t all = (g.train + w.batch_size - 1) / w.batch_size;
  return w.max_minibatches > 0 ? std::min(all, w.max_minibatches) : all;
}

frontier_sizes expected_frontiers(const graph_stats& g, const workload& w, double batch,
                                  double minibatches) {
  const auto hops = w.fanouts.size();
  frontier_sizes out;
  const double edges = static_cast<double>(g.edges);
  const double train = std::max<double>(1, static_cast<double>(g.train));
  const double seed_one = std::min(1.0, batch / train);
  const double seed_all = std::min(1.0, minibatches * batch / train);
  // Fresh neighbour draws so far by one minibatch: the frontier of hop l is
  // the seeds plus everything drawn in hops < l (sources keep destinations).
  double draws_so_far = 0;
  // Per group, P(in the hop-l frontier) for one minibatch, by hop.
  std::vector<std::vector<double>> reached(g.groups.size());
  for (std::size_t l = 0; l <= hops; ++l) {
    double frontier = 0, entries = 0, draws = 0, rows = 0, drawn = 0;
    for (std::size_t i = 0; i < g.groups.size(); ++i) {
      const auto& grp = g.groups[i];
      const double one =
          1 - (1 - (grp.train ? seed_one : 0)) * missed(grp.in_degree, edges, draws_so_far);
      const double all = 1 - (1 - (grp.train ? seed_all : 0)) *
                                 missed(grp.in_degree, edges, minibatches * draws_so_far);
      reached[i].push_back(one);
      frontier += grp.count * all;
      entries += grp.count * all * grp.out_degree;
      rows += grp.count * one;
      if (l == hops || grp.out_degree <= 0) continue;
      const double d = grp.out_degree;
      const double take = drawn_from(static_cast<double>(w.fanouts[l]), d);
      drawn += grp.count * one * take;
      // Vertices first reached at hop j (share reached[j] - reached[j-1])
      // drew at hops j..l-1 already: only the uncovered share is fresh.
      for (std::size_t j = 0; j <= l; ++j) {
        const double first = reached[i][j] - (j > 0 ? reached[i][j - 1] : 0);
        double uncovered = j > 0 ? std::max(0.0, 1 - g.reciprocity / d) : 1.0;
        for (std::size_t h = j; h < l; ++h)
          uncovered *= 1 - drawn_from(static_cast<double>(w.fanouts[h]), d) / d;
        draws += grp.count * first * take * uncovered;
      }
    }
    out.frontier.push_back(frontier);
    out.row_entries.push_back(entries);
    out.rows.push_back(minibatches * rows);
    out.drawn.push_back(minibatches * drawn);
    if (l == hops)
      for (std::size_t i = 0; i < g.groups.size(); ++i) {
        const auto& grp = g.groups[i];
        out.input_probability.push_back(
            1 - (1 - (grp.train ? seed_all : 0)) *
                    missed(grp.in_degree, edges, minibatches * draws_so_far));
      }
    if (l < hops) {
      out.draws.push_back(minibatches * draws);
      draws_so_far += draws;
    }
  }
  return out;
}

double block_columns(const graph_stats& g, int side) {
  if (side <= 1) {
    double nonempty = 0;
    for (const auto& grp : g.groups) nonempty += grp.in_degree > 0 ? grp.count : 0;
    return nonempty;
  }
  const double q = side;
  double total = 0;
  for (const auto& grp : g.groups)
    total += grp.count * q * (1 - std::pow(1 - 1 / q, grp.in_degree));
  return total;
}

double one_and_half_d_fetch_bytes(const fetch_load& x, int ranks, int replication, bool weighted) {
  const int team = ranks / replication;
  if (team <= 1) return 0;
  const double remote = 1 - 1.0 / team;
  const double exchanges = weighted ? 3 : 2;  // ids, rows (+ values)
  // Counts of every all-to-all, even an empty one; ids out (4 B), rows back
  // as [length, columns...] (4 B each), values (4 B each) when weighted.
  return ranks * exchanges * 4.0 * (team - 1) +
         remote * (8 * x.distinct + 4 * x.entries + (weighted ? 4 * x.entries : 0));
}

double one_and_half_d_draw_bytes(const fetch_load& x, int ranks, int replication, bool weighted) {
  const int team = ranks / replication;
  if (team <= 1) return 0;
  const double remote = 1 - 1.0 / team;
  const double exchanges = weighted ? 3 : 2;  // requests, drawn rows (+ weights)
  return ranks * exchanges * 4.0 * (team - 1) +
         remote * (12 * x.rows + 4 * x.drawn + (weighted ? 4 * x.drawn : 0));
}

double three_d_draw_bytes(const fetch_load& x, int ranks, int layers, bool weighted) {
  const double p = ranks, q = std::round(std::sqrt(p / layers)), f = layers * q;
  double bytes = 8 * p * (f - 1) + 8 * p * (q - 1) + 12 * x.rows * (1 - 1 / f) +
                 8 * x.distinct * (q - 1) + 8 * x.entries * (1 - 1 / q) + 4 * x.drawn * (1 - 1 / f);
  if (weighted)
    bytes +=
        4 * p * (f - 1) + 4 * p * (q - 1) + 4 * x.entries * (1 - 1 / q) + 4 * x.drawn * (1 - 1 / f);
  return bytes;
}

double two_d_fetch_bytes(const fetch_load& x, int ranks, double nnz, double a_block_columns,
                         bool weighted) {
  const double p = ranks, q = std::round(std::sqrt(p)), others = q - 1, remote = 1 - 1 / q;
  if (others <= 0) return 0;
  // 1-3: request counts (all-gather over P), S entries (slot, vertex) to the
  // owner of the vertex's column block, S block sizes (all-gather over q).
  const double requests =
      8 * p * (p - 1) + 4 * p * others + 8 * x.distinct * remote + 8 * p * others;
  // 4: SUMMA broadcasts every block of S along its process row and every
  // block of A along its process column (flat tree: q - 1 copies each). A
  // block of z entries in c non-empty columns is DCSC: 8(2c + 1 + z) bytes
  // of indices plus z values (1 B for S, 8 B {slot, weight} for A). S blocks
  // hold the distinct vertices of a process row's requests in that column
  // block; every block of A is non-empty and travels whole in every call.
  const double per_row = x.selection_columns / q;  // distinct vertices per process row
  const double s_blocks = per_row > 0 ? p * (1 - std::pow(1 - 1 / q, per_row)) : 0;
  const double selection = 8 * (2 * x.selection_columns + s_blocks) + 9 * x.distinct;
  const double adjacency = 8 * (2 * a_block_columns + p) + 16 * nnz;
  const double sizes = 64 * p * others + 32 * q * others;  // 8 all-gathers, 2 all-reduces
  const double summa = others * (selection + adjacency) + sizes;
  // 5: each member's pieces of the product rows back to their requester:
  // a count per row per other member, (column, slot) per entry; weighted
  // graphs add a second all-to-all of a count per member and 4 B per entry.
  const double pieces = 4 * p * others + 4 * x.distinct * others + 8 * x.entries * remote +
                        (weighted ? 4 * p * others + 4 * x.entries * remote : 0);
  return requests + summa + pieces;
}

double three_d_fetch_bytes(const fetch_load& x, int ranks, int layers, bool weighted) {
  const double p = ranks, q = std::round(std::sqrt(p / layers)), f = layers * q;
  // Requests to the owner's fiber rank, request lists along the process row,
  // row pieces back along the process row ((column, slot) per entry, a count
  // per row), complete rows back along the fiber (a length and a column per
  // entry); weighted graphs add a values all-to-all in both exchanges.
  double bytes = 8 * p * (f - 1) + 8 * p * (q - 1) + x.distinct * (8 * (1 - 1 / f) + 8 * (q - 1)) +
                 x.entries * (8 * (1 - 1 / q) + 4 * (1 - 1 / f));
  if (weighted)
    bytes += 4 * p * (f - 1) + 4 * p * (q - 1) + x.entries * (4 * (1 - 1 / q) + 4 * (1 - 1 / f));
  return bytes;
}

namespace {

// Vertices a layer-wise draw may take, alike in weight: `count` of them,
// each of relative weight `weight`.
struct draw_class {
  double count = 0;
  double weight = 0;
};

// λ with Σ count·(1 - exp(-λ·weight)) = draws: inclusion probabilities of
// `draws` distinct draws with probability ∝ weight.
double inclusion_rate(const std::vector<draw_class>& classes, double draws) {
  const auto included = [&](double rate) {
    double sum = 0;
    for (const auto& c : classes) sum += c.count * (1 - std::exp(-rate * c.weight));
    return sum;
  };
  double low = 0, high = 1;
  while (included(high) < draws && high < 1e300) high *= 2;
  for (int step = 0; step < 200; ++step) {
    const double mid = (low + high) / 2;
    (included(mid) < draws ? low : high) = mid;
  }
  return high;
}

}  // namespace

std::vector<layer_wise_load> expected_layer_wise_hops(const graph_stats& g, const workload& w,
                                                      double minibatches, int ranks) {
  const bool fastgcn = w.sampler == sampler_family::fastgcn;
  const double n = std::max<double>(1, static_cast<double>(g.nodes));
  const double train = std::max<double>(1, static_cast<double>(g.train));
  const double seed_one = std::min(1.0, static_cast<double>(w.batch_size) / train);
  const double seed_all = std::min(1.0, minibatches * static_cast<double>(w.batch_size) / train);
  const std::size_t groups = g.groups.size();
  const auto self_weight = [](double degree) { return 1 / ((degree + 1) * (degree + 1)); };
  // Â(u,v)² of an entry averaged over the entries of every row: what an
  // in-neighbour adds to a column's weight (its row picked by its length).
  double entries_all = 0, weight_all = 0, in_weighted = 0;
  for (const auto& grp : g.groups) {
    entries_all += grp.count * grp.out_degree;
    weight_all += grp.count * grp.out_degree * self_weight(grp.out_degree);
    in_weighted += grp.count * grp.in_degree;
  }
  std::vector<double> missed(groups, 1.0);  // no draw of one minibatch took it so far
  std::vector<layer_wise_load> hops;
  for (const std::int64_t fanout : w.fanouts) {
    std::vector<double> in_frontier(groups);
    double frontier = 0, frontier_entries = 0, frontier_weight = 0;
    for (std::size_t i = 0; i < groups; ++i) {
      const auto& grp = g.groups[i];
      in_frontier[i] = 1 - (1 - (grp.train ? seed_one : 0)) * missed[i];
      frontier += grp.count * in_frontier[i];
      frontier_entries += grp.count * in_frontier[i] * grp.out_degree;
      frontier_weight += grp.count * in_frontier[i] * grp.out_degree * self_weight(grp.out_degree);
    }
    // LADIES: a column's weight is Σ over its in-neighbours in the frontier;
    // frontier vertices add their own self loop. FastGCN: over every
    // in-neighbour, and the draw keeps what the frontier reaches.
    const double per_link = fastgcn
                                ? (entries_all > 0 ? weight_all / entries_all : 0)
                                : (frontier_entries > 0 ? frontier_weight / frontier_entries : 0);
    std::vector<draw_class> classes;
    std::vector<double> links(groups), outside_reached(groups);
    double weight_row = 0;
    for (std::size_t i = 0; i < groups; ++i) {
      const auto& grp = g.groups[i];
      links[i] = grp.in_degree * frontier / n;
      outside_reached[i] = (1 - in_frontier[i]) * (1 - std::exp(-links[i]));
      const double self = self_weight(grp.out_degree);
      if (fastgcn) {
        classes.push_back({grp.count, grp.in_degree * per_link + self});
      } else {
        // Given at least one in-neighbour in F, links / (1 - e^-links) of them.
        const double given_reached = links[i] > 1e-9 ? links[i] / (1 - std::exp(-links[i])) : 1;
        classes.push_back({grp.count * in_frontier[i], self + links[i] * per_link});
        classes.push_back({grp.count * outside_reached[i], given_reached * per_link});
      }
      weight_row += fastgcn ? grp.count : grp.count * (in_frontier[i] + outside_reached[i]);
    }
    const double draws = fanout < 0 ? weight_row : std::min<double>(fanout, weight_row);
    const double rate = inclusion_rate(classes, draws);
    layer_wise_load hop;
    double sources = 0, sources_in_weighted = 0;
    std::vector<double> next_missed(groups);
    for (std::size_t i = 0; i < groups; ++i) {
      const auto& grp = g.groups[i];
      // New sources: drawn vertices outside the frontier that it reaches.
      const auto& outside = fastgcn ? classes[i] : classes[2 * i + 1];
      const double drawn_new = outside_reached[i] * (1 - std::exp(-rate * outside.weight)) /
                               std::max(1e-300, 1 - in_frontier[i]);
      next_missed[i] = missed[i] * (1 - drawn_new);
      const double source =
          in_frontier[i] + outside_reached[i] * (1 - std::exp(-rate * outside.weight));
      sources += grp.count * source;
      sources_in_weighted += grp.count * grp.in_degree * source;
      const double in_step =
          1 - (1 - (grp.train ? seed_all : 0)) * std::pow(missed[i], minibatches);
      hop.frontier_rows += grp.count * in_step;
      hop.entries += grp.count * in_step * grp.out_degree;
    }
    // A frontier row's entries land on sources in proportion to their
    // in-degree; its self loop always does.
    const double on_sources = in_weighted > 0 ? sources_in_weighted / in_weighted : 0;
    double block = 0;
    for (std::size_t i = 0; i < groups; ++i)
      block += g.groups[i].count * in_frontier[i] * (g.groups[i].out_degree * on_sources + 1);
    hop.sources = minibatches * sources;
    hop.block_entries = minibatches * block;
    const double per_rank_range = weight_row / ranks;
    const double offered =
        fanout < 0 ? per_rank_range : std::min<double>(static_cast<double>(fanout), per_rank_range);
    hop.candidates = minibatches * ranks * offered;
    hops.push_back(hop);
    missed = std::move(next_missed);
  }
  return hops;
}

double layer_wise_row_bytes(const layer_wise_load& x, grid_kind kind, int ranks, int replication,
                            const layer_wise_path& path) {
  const bool cut_at_owners = path.cut_at_owners;
  const double p = ranks;
  const fetch_load whole{.distinct = p * x.frontier_rows, .entries = p * x.entries};
  switch (kind) {
    case grid_kind::replicated:
    case grid_kind::two_d_summa:
      return 0;
    case grid_kind::one_and_half_d: {
      const double team = p / replication;
      if (team <= 1) return 0;
      if (!cut_at_owners)
        return one_and_half_d_fetch_bytes(whole, ranks, replication, path.weighted);
      return 16 * p * (team - 1) + (1 - 1 / team) * (12 * p * x.frontier_rows + 4 * x.entries);
    }
    case grid_kind::two_d:
    case grid_kind::three_d: {
      const int layers = kind == grid_kind::two_d ? 1 : replication;
      const double q = std::round(std::sqrt(p / layers)), f = layers * q;
      if (f <= 1) return 0;
      if (!cut_at_owners) return three_d_fetch_bytes(whole, ranks, layers, path.weighted);
      return 16 * p * (f - 1) + 8 * p * (q - 1) +
             p * x.frontier_rows * (12 * (1 - 1 / f) + 8 * (q - 1)) +
             p * x.entries * 8 * (1 - 1 / q) + 4 * x.entries * (1 - 1 / f);
    }
    case grid_kind::one_d:
    case grid_kind::sar:
      break;  // full-batch grids
  }
  return std::nan("");
}

double layer_wise_hop_bytes(const layer_wise_load& x, grid_kind kind, int ranks, int replication,
                            const layer_wise_path& path, double minibatches) {
  const double p = ranks;
  if (ranks <= 1) return 0;
  const double draw = 8 * minibatches * p * (p - 1) + 8 * p * (p - 1) +
                      32 * x.candidates * (p - 1) + 8 * (p - 1) * x.sources;
  const double blocks = path.blocks_gathered ? 8 * p * (p - 1) + 8 * (p - 1) * x.block_entries : 0;
  return draw + blocks + layer_wise_row_bytes(x, kind, ranks, replication, path);
}

layer_wise_path layer_wise_path_of(const workload& w, grid_kind kind, int ranks, int replication) {
  // The ranks that own rows: a 1.5D team (P/c), a 2D/3D fiber (c·√(P/c)).
  double holders = 1;
  if (kind == grid_kind::one_and_half_d) holders = static_cast<double>(ranks) / replication;
  if (kind == grid_kind::two_d || kind == grid_kind::three_d) {
    const int layers = kind == grid_kind::two_d ? 1 : replication;
    holders = layers * std::round(std::sqrt(static_cast<double>(ranks) / layers));
  }
  const bool sharded = kind != grid_kind::replicated;
  layer_wise_path path;
  path.cut_at_owners = sharded && w.draw_at_owner && holders > 1;
  path.blocks_gathered = sharded && (w.sampler == sampler_family::fastgcn || path.cut_at_owners);
  path.weighted = w.weighted;
  return path;
}

namespace {

// Layer-wise sampling bytes of an epoch (sampling_bytes' layer-wise case),
// FastGCN's distribution on a sharded grid (every row, read once per run)
// counted in it.
double layer_wise_sampling_bytes(const graph_stats& g, const workload& w, grid_kind kind, int ranks,
                                 int replication) {
  if (kind == grid_kind::two_d_summa) return std::nan("");
  const auto path = layer_wise_path_of(w, kind, ranks, replication);
  double total = 0;
  if (w.sampler == sampler_family::fastgcn && kind != grid_kind::replicated && ranks > 1) {
    const layer_wise_load every_row{.frontier_rows = static_cast<double>(g.nodes),
                                    .entries = static_cast<double>(g.edges)};
    total += layer_wise_row_bytes(every_row, kind, ranks, replication, path);
  }
  const std::int64_t count = minibatches_per_epoch(g, w);
  std::map<std::int64_t, std::vector<layer_wise_load>> by_step;
  for (std::int64_t first = 0; first < count; first += w.bulk) {
    const std::int64_t in_step = std::min(w.bulk, count - first);
    auto it = by_step.find(in_step);
    if (it == by_step.end())
      it =
          by_step
              .emplace(in_step, expected_layer_wise_hops(g, w, static_cast<double>(in_step), ranks))
              .first;
    for (const auto& hop : it->second)
      total +=
          layer_wise_hop_bytes(hop, kind, ranks, replication, path, static_cast<double>(in_step));
  }
  return total;
}

}  // namespace

double sampling_bytes(const graph_stats& g, const workload& w, grid_kind kind, int ranks,
                      int replication) {
  if (ranks < 1 || replication < 1 || ranks % replication != 0) return std::nan("");
  if (kind == grid_kind::one_d || kind == grid_kind::sar) return std::nan("");
  if (w.sampler != sampler_family::node_wise) {
    if (kind == grid_kind::replicated && replication != 1) return std::nan("");
    if ((kind == grid_kind::two_d || kind == grid_kind::three_d) &&
        (!is_square(ranks / replication) || (kind == grid_kind::two_d && replication != 1)))
      return std::nan("");
    return layer_wise_sampling_bytes(g, w, kind, ranks, replication);
  }
  const std::int64_t count = minibatches_per_epoch(g, w);
  int side = 1;
  switch (kind) {
    case grid_kind::replicated:
      return replication == 1 ? 0 : std::nan("");
    case grid_kind::one_and_half_d:
      if (ranks == replication) return 0;
      break;
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
    case grid_kind::three_d: {
      const bool two_d = kind != grid_kind::three_d;
      const int layers = two_d ? 1 : replication;
      if (two_d && replication != 1) return std::nan("");
      if (!is_square(ranks / layers)) return std::nan("");
      side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks / layers))));
      if (ranks == 1) return 0;
      break;
    }
    case grid_kind::one_d:
    case grid_kind::sar:
      return std::nan("");  // full-batch grids
  }
  // As `bulkgnn sample` and `train` run it: every step takes `bulk`
  // minibatches (the last step fewer) and every rank samples its slice
  // (batch / P seeds) of each, with one collective row fetch per hop per step
  // over its slices' frontiers. Frontiers are cached by the number of slices
  // they union.
  const double slice = static_cast<double>(w.batch_size) / ranks;
  std::map<std::int64_t, frontier_sizes> by_slices;
  const auto frontiers = [&](std::int64_t k) -> const frontier_sizes& {
    auto it = by_slices.find(k);
    if (it == by_slices.end())
      it = by_slices.emplace(k, expected_frontiers(g, w, slice, static_cast<double>(k))).first;
    return it->second;
  };
  std::map<std::int64_t, frontier_sizes> by_process_row;
  const auto process_row_frontiers = [&](std::int64_t k) -> const frontier_sizes& {
    auto it = by_process_row.find(k);
    if (it == by_process_row.end())
      it = by_process_row.emplace(k, expected_frontiers(g, w, side * slice, static_cast<double>(k)))
               .first;
    return it->second;
  };
  const double nnz = static_cast<double>(g.edges);
  const double a_columns = kind == grid_kind::two_d_summa ? block_columns(g, side) : 0;
  // 2D-SUMMA setup: each rank all-gathers its A block's size over its process column.
  double total = kind == grid_kind::two_d_summa ? 8.0 * ranks * (side - 1) : 0;
  for (std::int64_t first = 0; first < count; first += w.bulk) {
    const std::int64_t in_step = std::min(w.bulk, count - first);
    for (std::size_t l = 0; l < w.fanouts.size(); ++l) {
      const auto& mine = frontiers(in_step);
      fetch_load x{.distinct = ranks * mine.frontier[l],
                   .entries = ranks * mine.row_entries[l],
                   .rows = ranks * mine.rows[l],
                   .drawn = ranks * mine.drawn[l]};
      // Whole rows (fanout -1) are fetched, not drawn, wherever the draw runs.
      const bool draw = w.draw_at_owner && w.fanouts[l] > 0;
      switch (kind) {
        case grid_kind::replicated:
          break;
        case grid_kind::one_and_half_d:
          total += draw ? one_and_half_d_draw_bytes(x, ranks, replication, w.weighted)
                        : one_and_half_d_fetch_bytes(x, ranks, replication, w.weighted);
          break;
        case grid_kind::two_d_summa:
          // S rows of a process row (sampling ranks iq .. iq + q - 1) union
          // their requesters' frontiers in each column block: q slices of
          // each minibatch, which share its draws, so q·batch/P seeds each.
          x.selection_columns = side * process_row_frontiers(in_step).frontier[l];
          total += two_d_fetch_bytes(x, ranks, nnz, a_columns, w.weighted);
          break;
        case grid_kind::two_d:
        case grid_kind::three_d: {
          const int layers = kind == grid_kind::two_d ? 1 : replication;
          total += draw ? three_d_draw_bytes(x, ranks, layers, w.weighted)
                        : three_d_fetch_bytes(x, ranks, layers, w.weighted);
          break;
        }
        case grid_kind::one_d:
        case grid_kind::sar:
          break;  // refused above
      }
    }
  }
  return total;
}

double feature_bytes(const graph_stats& g, const workload& w, int ranks, int feature_replication) {
  if (feature_replication <= 0 || ranks % feature_replication != 0) return std::nan("");
  const int group = ranks / feature_replication;
  if (group <= 1) return 0;
  const double remote = 1 - 1.0 / group;
  // Groups by in-degree, largest first: the cache holds their remote
  // vertices (a share `remote` of each group) until it is full.
  std::vector<std::size_t> by_in_degree(g.groups.size());
  std::iota(by_in_degree.begin(), by_in_degree.end(), 0);
  std::stable_sort(by_in_degree.begin(), by_in_degree.end(), [&](std::size_t a, std::size_t b) {
    return g.groups[a].in_degree > g.groups[b].in_degree;
  });
  std::vector<double> cached(g.groups.size(), 0);
  double room = static_cast<double>(std::max<std::int64_t>(w.feature_cache_rows, 0));
  for (const auto i : by_in_degree) {
    cached[i] = std::min(room, remote * g.groups[i].count);
    room -= cached[i];
  }
  // Per slice size: expected remote inputs fetched from their owners.
  std::map<double, double> fetched_of_slice;
  double total = 0;
  for (const double size : minibatch_sizes(g, w)) {
    // Each rank fetches the input nodes of its 1/P slice of the minibatch.
    const double slice = size / ranks;
    auto it = fetched_of_slice.find(slice);
    if (it == fetched_of_slice.end()) {
      const auto f = expected_frontiers(g, w, slice, 1);
      double hits = 0;
      for (std::size_t i = 0; i < g.groups.size(); ++i) hits += cached[i] * f.input_probability[i];
      it = fetched_of_slice.emplace(slice, remote * f.frontier.back() - hits).first;
    }
    const double per_rank =
        it->second * (4.0 + 4.0 * static_cast<double>(w.features)) + 2 * 4.0 * (group - 1);
    total += ranks * per_rank;
  }
  return total;
}

double gradient_bytes(const graph_stats& g, const workload& w, int ranks) {
  if (ranks <= 1) return 0;
  const auto ring = [&](std::int64_t bytes) {
    return static_cast<double>(2 * (ranks - 1) * bytes / ranks);  // integer, as counted
  };
  const auto steps = static_cast<double>(minibatches_per_epoch(g, w));
  // One all-reduce of every parameter per step, then the epoch's 3 metrics.
  return ranks * (steps * ring(4 * model_parameters(w)) + ring(3 * 8));
}

prediction predict(const graph_stats& g, const workload& w, grid_kind kind, int ranks,
                   int replication, int feature_replication) {
  prediction p{.kind = kind, .ranks = ranks, .replication = replication};
  p.sampling = sampling_bytes(g, w, kind, ranks, replication);
  // Layer-wise inputs (the last hop's sources each slice reaches) are not
  // modelled: features stay NaN for them.
  p.features = w.sampler == sampler_family::node_wise
                   ? feature_bytes(g, w, ranks, feature_replication)
                   : std::nan("");
  p.gradients = gradient_bytes(g, w, ranks);
  p.valid = !std::isnan(p.sampling) &&
            (!std::isnan(p.features) || w.sampler != sampler_family::node_wise);
  const auto minibatches = static_cast<double>(minibatches_per_epoch(g, w));
  const auto hops = static_cast<double>(w.fanouts.size());
  const double steps = std::ceil(minibatches / static_cast<double>(w.bulk));
  // Ids or requests out, rows back (+ values); each all-to-all sends its
  // counts first, then its data: two messages to every peer.
  const double exchanges = 2 * (w.weighted ? 3 : 2);
  switch (kind) {
    case grid_kind::replicated:
      break;
    case grid_kind::one_and_half_d:
      p.sampling_messages = steps * hops * exchanges * (ranks / replication - 1);
      break;
    case grid_kind::two_d:
    case grid_kind::three_d: {
      const int layers = kind == grid_kind::two_d ? 1 : replication;
      const double q = std::round(std::sqrt(static_cast<double>(ranks / layers)));
      // Along the fiber out and back, along the process row list and pieces.
      p.sampling_messages = steps * hops * exchanges * (layers * q - 1 + q - 1);
      break;
    }
    case grid_kind::two_d_summa: {
      const double q = std::round(std::sqrt(static_cast<double>(ranks)));
      // Counts over all ranks, S over the process row, q SUMMA stages each
      // broadcasting along a row and a column, pieces back.
      p.sampling_messages =
          steps * hops * ((ranks - 1) + 2 * (q - 1) + 2 * q * (q - 1) + exchanges * (q - 1));
      break;
    }
    case grid_kind::one_d:
    case grid_kind::sar:
      break;  // full-batch grids: p.sampling is nan
  }
  p.features_messages = minibatches * 2 * 2 * (ranks / feature_replication - 1);
  p.gradients_messages = ranks > 1 ? (minibatches + 1) * 2 * (ranks - 1) : 0;
  return p;
}

}  // namespace bulkgnn::distributed::cost
