// Link minibatches: not a sampler of the table but the seeds any node-wise
// sampler of it grows blocks from (sample_links).
#include "bulkgnn/sampler/link_seeds.hpp"

#include "../src/minibatch_parts.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bulkgnn::sampler {

namespace {

// Layer values of the link streams, apart from every hop's and the node
// epoch shuffle's (epoch_plan.cpp).
constexpr std::uint32_t link_shuffle_stream = 0xFFFFFFFDu;
constexpr std::uint32_t negative_stream = 0xFFFFFFFCu;

// in-degree^0.75 with square roots alone, which IEEE rounds the same everywhere.
double unigram_weight(edge_t degree) {
  const double d = static_cast<double>(degree);
  return std::sqrt(d) * std::sqrt(std::sqrt(d));
}

std::uint64_t float_bits(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

}  // namespace

negative_mode parse_negative_mode(const std::string& name) {
  if (name == "binary") return negative_mode::binary;
  if (name == "triplet") return negative_mode::triplet;
  throw option_error("negative_sampling.mode must be binary or triplet; got '" + name + "'");
}

negative_distribution parse_negative_distribution(const std::string& name) {
  if (name == "uniform") return negative_distribution::uniform;
  if (name == "degree") return negative_distribution::degree;
  throw option_error("negative_sampling.distribution must be uniform or degree; got '" + name +
                     "'");
}

edge_exclusion parse_edge_exclusion(const std::string& name) {
  if (name == "none") return edge_exclusion::none;
  if (name == "self") return edge_exclusion::self;
  if (name == "reverse") return edge_exclusion::reverse;
  throw option_error("link_options.exclude must be none, self or reverse; got '" + name + "'");
}

std::string_view edge_exclusion_name(edge_exclusion e) {
  switch (e) {
    case edge_exclusion::none:
      return "none";
    case edge_exclusion::self:
      return "self";
    case edge_exclusion::reverse:
      return "reverse";
  }
  return "unknown";
}

void validate(const link_options& o) {
  BULKGNN_EXPECTS(o.batch_size > 0, "link_options.batch_size must be positive, got {}",
                  o.batch_size);
  const double amount = o.negatives.amount;
  BULKGNN_EXPECTS(std::isfinite(amount) && amount >= 0 && amount <= 1e4,
                  "negative_sampling.amount must be in [0, 10000], got {}", amount);
  BULKGNN_EXPECTS(
      o.negatives.mode != negative_mode::triplet || (amount >= 1 && amount == std::floor(amount)),
      "negative_sampling.amount: triplet negatives are a whole number (at least 1) "
      "per positive, got {}",
      amount);
  // Each negative of a minibatch has a stream of its own, numbered in 32 bits.
  BULKGNN_EXPECTS(static_cast<double>(o.batch_size) * amount < 4294967296.0,
                  "link_options.batch_size {} with negative_sampling.amount {} asks for more "
                  "negatives per minibatch than 2^32",
                  o.batch_size, amount);
}

void validate(edge_list positives, std::int64_t num_vertices) {
  BULKGNN_EXPECTS(positives.source.size() == positives.target.size(),
                  "link seeds: {} sources but {} targets", positives.source.size(),
                  positives.target.size());
  BULKGNN_EXPECTS(!positives.source.empty(), "link seeds: the split has no positive edges");
  BULKGNN_EXPECTS(positives.source.size() < (std::size_t{1} << 32),
                  "link seeds: too many positive edges ({})", positives.source.size());
  BULKGNN_EXPECTS(positives.label.empty() || positives.label.size() == positives.source.size(),
                  "link seeds: {} labels for {} positive edges", positives.label.size(),
                  positives.source.size());
  for (std::size_t i = 0; i < positives.source.size(); ++i)
    BULKGNN_EXPECTS(positives.source[i] >= 0 && positives.source[i] < num_vertices &&
                        positives.target[i] >= 0 && positives.target[i] < num_vertices,
                    "link seeds: positive edge {} ({} -> {}) is outside the graph's {} vertices", i,
                    positives.source[i], positives.target[i], num_vertices);
  for (std::size_t i = 0; i < positives.label.size(); ++i)
    BULKGNN_EXPECTS(std::isfinite(positives.label[i]), "link seeds: positive edge {} has label {}",
                    i, positives.label[i]);
}

negative_sampler::negative_sampler(csr_view graph, const negative_sampling& options)
    : graph_(graph), options_(options) {
  BULKGNN_EXPECTS(graph.rows > 0, "negative_sampling: the graph has no vertices to draw from");
  BULKGNN_EXPECTS(host_accessible(graph.space),
                  "negative_sampling: the graph must be in host-readable memory");
  if (options.distribution != negative_distribution::degree) return;
  cumulative_.resize(static_cast<std::size_t>(graph.rows));
  double total = 0;
  for (std::int64_t v = 0; v < graph.rows; ++v) {
    total += unigram_weight(graph.indptr[v + 1] - graph.indptr[v]);
    cumulative_[static_cast<std::size_t>(v)] = total;
  }
  BULKGNN_EXPECTS(total > 0,
                  "negative_sampling.distribution degree: the graph has no edges to weigh "
                  "vertices by");
}

vertex_t negative_sampler::endpoint(philox_stream& rng) const {
  if (cumulative_.empty())
    return static_cast<vertex_t>(rng.uniform_below(static_cast<std::uint32_t>(graph_.rows)));
  const double u = rng.uniform_open01() * cumulative_.back();
  const auto at = std::ranges::upper_bound(cumulative_, u);
  // u < total, so `at` is a vertex; the guard covers rounding at the top.
  return static_cast<vertex_t>(std::min<std::ptrdiff_t>(at - cumulative_.begin(), graph_.rows - 1));
}

bool negative_sampler::is_edge(vertex_t source, vertex_t target) const {
  const auto row = graph_.indices.subspan(
      static_cast<std::size_t>(graph_.indptr[target] - graph_.indptr[0]),
      static_cast<std::size_t>(graph_.indptr[target + 1] - graph_.indptr[target]));
  return std::ranges::binary_search(row, source);
}

std::pair<vertex_t, vertex_t> negative_sampler::draw(const rng_key& key,
                                                     vertex_t fixed_source) const {
  philox_stream rng(key);
  for (int attempt = 0; attempt < (options_.strict ? strict_attempts : 1); ++attempt) {
    const vertex_t source = fixed_source >= 0 ? fixed_source : endpoint(rng);
    const vertex_t target = endpoint(rng);
    if (!options_.strict || (source != target && !is_edge(source, target))) return {source, target};
  }
  if (fixed_source >= 0)
    throw option_error(fmt::format(
        "negative_sampling.strict: in {} draws, every target was vertex {} itself or the head "
        "of an edge from it (of the graph's {} vertices); turn strict off or use a sparser "
        "graph",
        strict_attempts, fixed_source, graph_.rows));
  throw option_error(fmt::format(
      "negative_sampling.strict: no pair of vertices that is not an edge in {} draws; the "
      "graph's {} vertices are too densely connected for strict negatives",
      strict_attempts, graph_.rows));
}

link_epoch_plan::link_epoch_plan(edge_list positives, const negative_sampler& negatives,
                                 const link_options& options, std::uint32_t epoch)
    : positives_(positives), negatives_(negatives), options_(options), epoch_(epoch) {
  validate(options);
  validate(positives, negatives.num_vertices());
  BULKGNN_EXPECTS(positives.label.empty() || options.negatives.mode == negative_mode::binary,
                  "negative_sampling.mode triplet: positives carry no labels (PyG's triplet "
                  "batches have none)");
  // As PyG: with binary negatives, labels from 0 move up by one, so that 0
  // is the negatives' label; labels that leave 0 free stay.
  if (options.negatives.mode == negative_mode::binary && options.negatives.amount > 0 &&
      !positives.label.empty() && std::ranges::min(positives.label) == 0.0f)
    label_shift_ = 1;
  order_.resize(positives.source.size());
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<std::int64_t>(i);
  if (!options.shuffle) return;
  philox_stream rng(rng_key{options.seed, epoch, no_minibatch, link_shuffle_stream, 0});
  for (std::size_t i = order_.size() - 1; i > 0; --i)
    std::swap(order_[i], order_[rng.uniform_below(static_cast<std::uint32_t>(i + 1))]);
}

std::int64_t link_epoch_plan::num_minibatches() const {
  return minibatch_count(static_cast<std::int64_t>(order_.size()), options_.batch_size);
}

namespace {

// The pairs' endpoints (global ids) as s.nodes, sorted and distinct, and the
// pairs in local ids (positions in s.nodes).
void set_endpoints(link_seeds& s, const std::vector<vertex_t>& source,
                   const std::vector<vertex_t>& target,
                   const std::vector<vertex_t>& negative_target) {
  s.nodes = source;
  s.nodes.insert(s.nodes.end(), target.begin(), target.end());
  s.nodes.insert(s.nodes.end(), negative_target.begin(), negative_target.end());
  std::ranges::sort(s.nodes);
  // std::unique, not ranges::unique: clang cannot use libstdc++ 12's subrange.
  s.nodes.erase(std::unique(s.nodes.begin(), s.nodes.end()), s.nodes.end());
  const auto local = [&](vertex_t v) {
    return static_cast<vertex_t>(std::ranges::lower_bound(s.nodes, v) - s.nodes.begin());
  };
  for (const auto v : source) s.label_source.push_back(local(v));
  for (const auto v : target) s.label_target.push_back(local(v));
  for (const auto v : negative_target) s.negative_target.push_back(local(v));
}

}  // namespace

link_seeds link_epoch_plan::seeds(std::int64_t minibatch) const {
  BULKGNN_ASSERT(minibatch >= 0 && minibatch < num_minibatches());
  const auto begin = minibatch * options_.batch_size;
  const auto end =
      std::min<std::int64_t>(begin + options_.batch_size, static_cast<std::int64_t>(order_.size()));
  link_seeds s;
  s.index = minibatch;
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;
  for (auto k = begin; k < end; ++k) {
    const auto i = static_cast<std::size_t>(order_[static_cast<std::size_t>(k)]);
    s.input_id.push_back(order_[static_cast<std::size_t>(k)]);
    source.push_back(positives_.source[i]);
    target.push_back(positives_.target[i]);
  }
  const auto positives = static_cast<std::int64_t>(source.size());
  const auto& n = options_.negatives;
  const auto key = [&](std::int64_t row) {
    return rng_key{options_.seed, epoch_, static_cast<std::uint32_t>(minibatch), negative_stream,
                   static_cast<std::uint32_t>(row)};
  };
  std::vector<vertex_t> negative_target;
  if (n.mode == negative_mode::binary) {
    // As PyG: ceil(P · amount) pairs.
    const auto count =
        static_cast<std::int64_t>(std::ceil(static_cast<double>(positives) * n.amount));
    for (std::int64_t k = 0; k < count; ++k) {
      const auto [s_neg, t_neg] = negatives_.draw(key(k));
      source.push_back(s_neg);
      target.push_back(t_neg);
    }
    for (const auto i : s.input_id)
      s.edge_label.push_back(positives_.label.empty()
                                 ? 1.0f
                                 : positives_.label[static_cast<std::size_t>(i)] + label_shift_);
    s.edge_label.resize(source.size(), 0.0f);
  } else {
    const auto per_positive = static_cast<std::int64_t>(n.amount);
    for (std::int64_t i = 0; i < positives; ++i)
      for (std::int64_t k = 0; k < per_positive; ++k)
        negative_target.push_back(
            negatives_.draw(key(i * per_positive + k), source[static_cast<std::size_t>(i)]).second);
  }
  set_endpoints(s, source, target, negative_target);
  s.minibatch_pairs = s.pairs();
  return s;
}

link_seeds slice_of(const link_seeds& whole, int slice, int slices) {
  BULKGNN_EXPECTS(slices >= 1 && slice >= 0 && slice < slices,
                  "slice_of: slice {} of {} does not exist", slice, slices);
  const auto positives = whole.positives();
  const auto [first, last] = slice_range(positives, slice, slices);
  link_seeds s;
  s.index = whole.index;
  s.minibatch_pairs = whole.minibatch_pairs;
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;
  std::vector<vertex_t> negative_target;
  const auto take = [&](std::int64_t pair) {
    source.push_back(whole.global(whole.label_source[static_cast<std::size_t>(pair)]));
    target.push_back(whole.global(whole.label_target[static_cast<std::size_t>(pair)]));
    if (!whole.edge_label.empty())
      s.edge_label.push_back(whole.edge_label[static_cast<std::size_t>(pair)]);
  };
  for (auto i = first; i < last; ++i) {
    take(i);
    s.input_id.push_back(whole.input_id[static_cast<std::size_t>(i)]);
  }
  if (whole.negative_target.empty()) {
    const auto negatives = static_cast<std::int64_t>(whole.label_source.size()) - positives;
    const auto [negative_first, negative_last] = slice_range(negatives, slice, slices);
    for (auto k = negative_first; k < negative_last; ++k) take(positives + k);
  } else {
    const auto per_positive = static_cast<std::int64_t>(whole.negative_target.size()) / positives;
    for (auto k = first * per_positive; k < last * per_positive; ++k)
      negative_target.push_back(whole.global(whole.negative_target[static_cast<std::size_t>(k)]));
  }
  set_endpoints(s, source, target, negative_target);
  return s;
}

std::size_t link_seeds::size_bytes() const {
  return (nodes.size() + label_source.size() + label_target.size() + negative_target.size()) *
             sizeof(vertex_t) +
         input_id.size() * sizeof(std::int64_t) + edge_label.size() * sizeof(float);
}

std::size_t link_bulk::size_bytes() const {
  std::size_t bytes = nodes.size_bytes();
  for (const auto& s : seeds) bytes += s.size_bytes();
  return bytes;
}

std::vector<std::uint64_t> excluded_keys(const link_seeds& seeds, edge_exclusion exclude) {
  std::vector<std::uint64_t> keys;
  if (exclude == edge_exclusion::none) return keys;
  for (std::int64_t i = 0; i < seeds.positives(); ++i) {
    const auto source = seeds.global(seeds.label_source[static_cast<std::size_t>(i)]);
    const auto target = seeds.global(seeds.label_target[static_cast<std::size_t>(i)]);
    keys.push_back(kernels::edge_key(target, source));  // s → t, stored in row t
    if (exclude == edge_exclusion::reverse) keys.push_back(kernels::edge_key(source, target));
  }
  return keys;
}

namespace {

// A node minibatch's digest folded with its supervision (global ids).
std::uint64_t with_supervision(std::uint64_t node_digest, const link_seeds& s) {
  digest_hasher h;
  h.add(node_digest);
  const auto add_global = [&](const std::vector<vertex_t>& local) {
    h.add(static_cast<std::uint64_t>(local.size()));
    for (const auto v : local) h.add(static_cast<std::uint64_t>(s.global(v)));
  };
  add_global(s.label_source);
  add_global(s.label_target);
  add_global(s.negative_target);
  h.add(static_cast<std::uint64_t>(s.edge_label.size()));
  for (const auto label : s.edge_label) h.add(float_bits(label));
  for (const auto id : s.input_id) h.add(static_cast<std::uint64_t>(id));
  return h.value();
}

}  // namespace

std::uint64_t link_bulk::digest(std::int64_t j) const {
  return with_supervision(nodes.digest(j), seeds[static_cast<std::size_t>(j)]);
}

std::uint64_t digest(const minibatch& mb, const link_seeds& seeds) {
  return with_supervision(sampler::digest(mb), seeds);
}

link_bulk sample_links(bulk_sampler& sampler, const link_epoch_plan& plan, std::int64_t first,
                       std::int64_t count, edge_exclusion exclude, int slice, int slices) {
  BULKGNN_EXPECTS(first >= 0 && count > 0 && first + count <= plan.num_minibatches(),
                  "sample_links: minibatches [{}, {}) outside the epoch's {}", first, first + count,
                  plan.num_minibatches());
  // A slice's endpoints sample their part alone where each destination draws
  // alone; otherwise (LADIES, FastGCN, LABOR-i with i >= 1, per-minibatch
  // sampler programs) every slice samples the whole minibatch and keeps what
  // its endpoints reach, cut on the host.
  const bool cut_from_whole = slices > 1 && !sampler.destinations_draw_alone();
  link_bulk bulk;
  segmented_vertices endpoints;
  segmented_vertices whole_endpoints;
  std::vector<std::int64_t> ids;
  kernels::excluded_edges excluded;
  for (std::int64_t j = 0; j < count; ++j) {
    auto whole = plan.seeds(first + j);
    excluded.push_segment(excluded_keys(whole, exclude));
    if (cut_from_whole) whole_endpoints.push_segment(whole.nodes);
    bulk.seeds.push_back(slices == 1 ? std::move(whole) : slice_of(whole, slice, slices));
    endpoints.push_segment(bulk.seeds.back().nodes);
    ids.push_back(first + j);
  }
  const auto sample = [&](segmented_vertices nodes) {
    return exclude == edge_exclusion::none
               ? sampler.sample(plan.epoch(), std::move(nodes), ids)
               : sampler.sample(plan.epoch(), std::move(nodes), ids, excluded);
  };
  if (!cut_from_whole) {
    bulk.nodes = sample(std::move(endpoints));
    return bulk;
  }
  const auto whole_bulk = sample(whole_endpoints);
  BULKGNN_EXPECTS(host_accessible(whole_bulk.seeds.vertices.space()),
                  "sample_links: link minibatches of the {} sampler split over ranks are cut "
                  "from the whole minibatch on the host back ends only so far",
                  sampler.options().kind);
  bulk.nodes = parts_of(whole_bulk, whole_endpoints, endpoints, sampler.options().kind);
  return bulk;
}

}  // namespace bulkgnn::sampler
