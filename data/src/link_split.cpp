#include "bulkgnn/data/link_split.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/npy.hpp"
#include "native_format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

namespace bulkgnn::data {

namespace {

// Stream layers of the split's draws (no epoch, no minibatch).
constexpr std::uint32_t split_shuffle_stream = 1;
constexpr std::uint32_t split_negative_stream = 2;
constexpr int negative_attempts = 1000;

bool has_edge(csr_view g, vertex_t source, vertex_t target) {
  const auto row = g.row(target);
  return std::binary_search(row.begin(), row.end(), source);
}

bool is_symmetric(csr_view g) {
  for (vertex_t v = 0; v < g.rows; ++v)
    for (const auto u : g.row(v))
      if (!has_edge(g, v, u)) return false;
  return true;
}

// The in-neighbour CSR of `edges` over n vertices (both directions when
// `undirected`), rows sorted; with `distinct`, an edge listed twice (a
// stored undirected edge in both directions) once.
csr_matrix graph_of(std::int64_t n, const std::vector<const edge_arrays*>& parts, bool undirected,
                    bool distinct = false) {
  std::vector<std::vector<vertex_t>> rows(static_cast<std::size_t>(n));
  for (const auto* edges : parts)
    for (std::int64_t i = 0; i < edges->size(); ++i) {
      const auto s = edges->source[static_cast<std::size_t>(i)];
      const auto t = edges->target[static_cast<std::size_t>(i)];
      rows[static_cast<std::size_t>(t)].push_back(s);
      if (undirected) rows[static_cast<std::size_t>(s)].push_back(t);
    }
  csr_matrix g;
  g.rows = g.cols = n;
  g.indptr.reserve(static_cast<std::size_t>(n) + 1);
  for (auto& row : rows) {
    std::ranges::sort(row);
    if (distinct) row.erase(std::unique(row.begin(), row.end()), row.end());
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// `count` distinct pairs that are no edge of `graph` and no loop, as PyG's
// negative sampling gives them; on an undirected graph a pair is unordered
// and listed smaller endpoint first, as the positives are. Negative k is
// drawn from a stream of its own, redrawn while it repeats an earlier one.
edge_arrays distinct_negatives(csr_view graph, std::int64_t count, bool undirected,
                               std::uint32_t seed) {
  BULKGNN_EXPECTS(count < (std::int64_t{1} << 32),
                  "link_split_options.negatives_per_positive: {} negatives are more than 2^32",
                  count);
  edge_arrays out;
  const auto n = static_cast<std::uint32_t>(graph.rows);
  std::set<std::pair<vertex_t, vertex_t>> drawn;
  for (std::int64_t k = 0; k < count; ++k) {
    philox_stream rng(
        rng_key{seed, 0, no_minibatch, split_negative_stream, static_cast<std::uint32_t>(k)});
    bool found = false;
    for (int attempt = 0; attempt < negative_attempts && !found; ++attempt) {
      auto s = static_cast<vertex_t>(rng.uniform_below(n));
      auto t = static_cast<vertex_t>(rng.uniform_below(n));
      if (undirected && t < s) std::swap(s, t);
      found = s != t && !has_edge(graph, s, t) && drawn.insert({s, t}).second;
      if (found) out.push_back(s, t);
    }
    BULKGNN_EXPECTS(found,
                    "link_split_options.negatives_per_positive: no new pair of the graph's {} "
                    "vertices that is not an edge in {} draws; the graph is too dense for {} "
                    "negatives",
                    graph.rows, negative_attempts, count);
  }
  return out;
}

}  // namespace

link_split random_link_split(csr_view graph, const link_split_options& o) {
  BULKGNN_EXPECTS(host_accessible(graph.space),
                  "random_link_split: the graph is not in host memory");
  const auto fraction_ok = [](double f) { return std::isfinite(f) && f >= 0 && f < 1; };
  BULKGNN_EXPECTS(fraction_ok(o.valid_fraction),
                  "link_split_options.valid_fraction must be in [0, 1), got {}", o.valid_fraction);
  BULKGNN_EXPECTS(fraction_ok(o.test_fraction),
                  "link_split_options.test_fraction must be in [0, 1), got {}", o.test_fraction);
  BULKGNN_EXPECTS(o.valid_fraction + o.test_fraction < 1,
                  "link_split_options: valid_fraction {} and test_fraction {} leave no training "
                  "edges",
                  o.valid_fraction, o.test_fraction);
  BULKGNN_EXPECTS(std::isfinite(o.negatives_per_positive) && o.negatives_per_positive >= 0 &&
                      o.negatives_per_positive <= 1000,
                  "link_split_options.negatives_per_positive must be in [0, 1000], got {}",
                  o.negatives_per_positive);
  link_split split;
  split.undirected = is_symmetric(graph);
  // A repeated edge is one candidate: its copies split apart would put a
  // held-out edge in the graph messages pass over.
  edge_arrays candidates;
  for (vertex_t t = 0; t < graph.rows; ++t) {
    const auto row = graph.row(t);
    for (std::size_t k = 0; k < row.size(); ++k)
      if (row[k] != t && (!split.undirected || row[k] < t) && (k == 0 || row[k - 1] != row[k]))
        candidates.push_back(row[k], t);
  }
  const auto m = candidates.size();
  BULKGNN_EXPECTS(m > 0, "random_link_split: the graph has no edges to split");
  BULKGNN_EXPECTS(m < (std::int64_t{1} << 32), "random_link_split: too many edges ({})", m);
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  philox_stream rng(rng_key{o.seed, 0, no_minibatch, split_shuffle_stream, 0});
  for (std::size_t i = order.size() - 1; i > 0; --i)
    std::swap(order[i], order[rng.uniform_below(static_cast<std::uint32_t>(i + 1))]);
  const auto tests =
      static_cast<std::int64_t>(std::floor(o.test_fraction * static_cast<double>(m)));
  const auto valids =
      static_cast<std::int64_t>(std::floor(o.valid_fraction * static_cast<double>(m)));
  BULKGNN_EXPECTS(tests + valids < m,
                  "link_split_options: valid_fraction {} and test_fraction {} of {} edges leave "
                  "no training edges",
                  o.valid_fraction, o.test_fraction, m);
  for (std::int64_t k = 0; k < m; ++k) {
    const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
    auto& part = k < tests ? split.test : k < tests + valids ? split.valid : split.train;
    part.push_back(candidates.source[i], candidates.target[i]);
  }
  const auto negatives = [&](std::int64_t positives) {
    return static_cast<std::int64_t>(
        std::ceil(static_cast<double>(positives) * o.negatives_per_positive));
  };
  // Drawn together, so that no valid negative is a test negative.
  const auto valid_count = negatives(split.valid.size());
  const auto all = distinct_negatives(graph, valid_count + negatives(split.test.size()),
                                      split.undirected, o.seed);
  for (std::int64_t k = 0; k < all.size(); ++k)
    (k < valid_count ? split.valid_negatives : split.test_negatives)
        .push_back(all.source[static_cast<std::size_t>(k)],
                   all.target[static_cast<std::size_t>(k)]);
  split.train_graph = graph_of(graph.rows, {&split.train}, split.undirected);
  split.test_graph = graph_of(graph.rows, {&split.train, &split.valid}, split.undirected);
  return split;
}

namespace {

constexpr const char* link_split_format = "bulkgnn-link-split";

// The five edge lists of a stored split, by file stem, in file order.
struct stored_part {
  const char* stem;
  edge_arrays link_split::*edges;
  bool positive;  // supervision edges: no loops
};
constexpr std::array<stored_part, 5> stored_parts{{
    {"train", &link_split::train, true},
    {"valid", &link_split::valid, true},
    {"test", &link_split::test, true},
    {"valid_negatives", &link_split::valid_negatives, false},
    {"test_negatives", &link_split::test_negatives, false},
}};

// The optional per-positive negative targets, with the positives they go
// with.
struct stored_target_part {
  const char* stem;
  negative_targets link_split::*targets;
  edge_arrays link_split::*positives;
};
constexpr std::array<stored_target_part, 2> stored_targets{{
    {"valid_negative_targets", &link_split::valid_negative_targets, &link_split::valid},
    {"test_negative_targets", &link_split::test_negative_targets, &link_split::test},
}};

void check_targets(const negative_targets& t, std::int64_t positives, std::int64_t vertices,
                   const std::string& file) {
  if (t.empty()) return;
  if (t.per_positive < 1 || std::ssize(t.targets) != positives * t.per_positive)
    throw data_error(file, fmt::format("holds {} targets, not {} for each of the {} positives",
                                       t.targets.size(), t.per_positive, positives));
  for (std::size_t i = 0; i < t.targets.size(); ++i)
    if (t.targets[i] < 0 || t.targets[i] >= vertices)
      throw data_error(
          file, fmt::format("positive {}'s target {} is vertex {}, outside the "
                            "graph's [0, {})",
                            static_cast<std::int64_t>(i) / t.per_positive,
                            static_cast<std::int64_t>(i) % t.per_positive, t.targets[i], vertices));
}

void check_part(const edge_arrays& edges, const stored_part& part, csr_view graph,
                const std::string& where) {
  const auto file = fmt::format("{}/{}.npy", where, part.stem);
  for (std::int64_t i = 0; i < edges.size(); ++i) {
    const auto s = edges.source[static_cast<std::size_t>(i)];
    const auto t = edges.target[static_cast<std::size_t>(i)];
    for (const vertex_t v : {s, t})
      if (v < 0 || v >= graph.rows)
        throw data_error(file, fmt::format("edge {} ({} -> {}) has vertex {}, outside the "
                                           "graph's [0, {})",
                                           i, s, t, v, graph.rows));
    if (part.positive && s == t)
      throw data_error(file, fmt::format("edge {} is a loop ({} -> {}); a loop is never a "
                                         "link to predict",
                                         i, s, t));
    if (part.edges == &link_split::train && !has_edge(graph, s, t))
      throw data_error(file, fmt::format("training edge {} ({} -> {}) is not an edge of the "
                                         "graph",
                                         i, s, t));
  }
}

// How many held-out positives messages pass over: valid edges among the
// training ones, test edges among the training or valid ones (either
// direction on an undirected graph). A random split has none; OGB's
// ogbl-collab repeats collaborations across its years, so its own split has
// some, which its benchmark defines as they are.
void count_held_out_overlap(link_split& split) {
  using pair = std::pair<vertex_t, vertex_t>;
  const auto key = [&](vertex_t s, vertex_t t) {
    return split.undirected && t < s ? pair{t, s} : pair{s, t};
  };
  std::vector<pair> passed;
  const auto add = [&](const edge_arrays& edges) {
    for (std::int64_t i = 0; i < edges.size(); ++i)
      passed.push_back(key(edges.source[static_cast<std::size_t>(i)],
                           edges.target[static_cast<std::size_t>(i)]));
    std::ranges::sort(passed);
  };
  const auto overlap = [&](const edge_arrays& edges) {
    std::int64_t found = 0;
    for (std::int64_t i = 0; i < edges.size(); ++i)
      found += std::ranges::binary_search(passed, key(edges.source[static_cast<std::size_t>(i)],
                                                      edges.target[static_cast<std::size_t>(i)]))
                   ? 1
                   : 0;
    return found;
  };
  add(split.train);
  split.valid_in_training = overlap(split.valid);
  add(split.valid);
  split.test_in_training_or_valid = overlap(split.test);
}

void check_link_split(const link_split& split, csr_view graph, const std::string& where) {
  BULKGNN_EXPECTS(host_accessible(graph.space), "link split: the graph is not in host memory");
  BULKGNN_EXPECTS(graph.rows < (std::int64_t{1} << 31),
                  "link split: {} vertices do not fit int32 ids", graph.rows);
  for (const auto& part : stored_parts) {
    const auto& edges = split.*part.edges;
    if (edges.source.size() != edges.target.size())
      throw data_error(
          fmt::format("{}/{}.npy", where, part.stem),
          fmt::format("{} sources but {} targets", edges.source.size(), edges.target.size()));
    check_part(edges, part, graph, where);
  }
  if (split.train.size() == 0)
    throw data_error(fmt::format("{}/train.npy", where), "holds no training edges");
  for (const auto& part : stored_targets)
    check_targets(split.*part.targets, (split.*part.positives).size(), graph.rows,
                  fmt::format("{}/{}.npy", where, part.stem));
}

}  // namespace

void write_link_split(const std::filesystem::path& dir, const link_split& split, csr_view graph) {
  check_link_split(split, graph, dir.string());
  native_writer writer(dir, link_split_format);
  nlohmann::json manifest{{"num_nodes", graph.rows}};
  for (const auto& part : stored_parts) {
    const auto& edges = split.*part.edges;
    auto array = writer.create(fmt::format("{}.npy", part.stem), dtype::int32, {2, edges.size()});
    const auto values = array.as<std::int32_t>();
    std::copy(edges.source.begin(), edges.source.end(), values.begin());
    std::copy(edges.target.begin(), edges.target.end(), values.begin() + edges.size());
    manifest[part.stem] = edges.size();
  }
  for (const auto& part : stored_targets) {
    const auto& t = split.*part.targets;
    if (t.empty()) continue;
    const auto positives = static_cast<std::int64_t>(t.targets.size()) / t.per_positive;
    auto array =
        writer.create(fmt::format("{}.npy", part.stem), dtype::int32, {positives, t.per_positive});
    std::ranges::copy(t.targets, array.as<std::int32_t>().begin());
    manifest[part.stem] = {positives, t.per_positive};
  }
  writer.commit(manifest);
}

link_split read_link_split(const std::filesystem::path& dir, csr_view graph) {
  detail::require_directory(dir);
  const auto manifest_path = dir / detail::manifest_name;
  const auto manifest = detail::read_manifest(manifest_path, link_split_format);
  const auto num_nodes = detail::manifest_count(manifest, "num_nodes", manifest_path, true);
  if (num_nodes != graph.rows)
    throw data_error(
        manifest_path.string(),
        fmt::format("the split is for {} vertices; the graph has {}", num_nodes, graph.rows));
  link_split split;
  for (const auto& part : stored_parts) {
    const auto count = detail::manifest_count(manifest, part.stem, manifest_path, true);
    const auto array = npy_array::open(dir / fmt::format("{}.npy", part.stem));
    const auto values = detail::typed<const std::int32_t>(array, {2, count});
    auto& edges = split.*part.edges;
    edges.source.assign(values.begin(), values.begin() + count);
    edges.target.assign(values.begin() + count, values.end());
  }
  for (const auto& part : stored_targets) {
    if (!manifest.contains(part.stem)) continue;
    const auto& shape = manifest[part.stem];
    if (!shape.is_array() || shape.size() != 2 || !shape[0].is_number_integer() ||
        !shape[1].is_number_integer() || shape[0].get<std::int64_t>() < 0 ||
        shape[1].get<std::int64_t>() < 1)
      throw data_error(manifest_path.string(),
                       fmt::format("\"{}\" is not a shape [positives, targets each]", part.stem));
    const std::int64_t rows = shape[0].get<std::int64_t>();
    const std::int64_t per = shape[1].get<std::int64_t>();
    const auto array = npy_array::open(dir / fmt::format("{}.npy", part.stem));
    const auto values = detail::typed<const std::int32_t>(array, {rows, per});
    auto& t = split.*part.targets;
    t.targets.assign(values.begin(), values.end());
    t.per_positive = t.targets.empty() ? 0 : per;
  }
  check_link_split(split, graph, dir.string());
  split.undirected = is_symmetric(graph);
  count_held_out_overlap(split);
  split.train_graph = graph_of(graph.rows, {&split.train}, split.undirected, true);
  split.test_graph = graph_of(graph.rows, {&split.train, &split.valid}, split.undirected, true);
  return split;
}

}  // namespace bulkgnn::data
