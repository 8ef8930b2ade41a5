#include "bulkgnn/sampler/saint_subgraphs.hpp"

#include "../src/kept_arrays.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <span>
#include <tuple>

namespace bulkgnn::sampler {

namespace {

// Layer values of GraphSAINT's draws, apart from every hop's streams, the
// epoch shuffle's and each other: an epoch's subgraphs, and the presampled
// ones (their epoch value is 0; any epoch number may be drawn).
constexpr std::uint32_t saint_stream = 0xFFFFFFFDu;
constexpr std::uint32_t saint_presample_stream = 0xFFFFFFFCu;
// PyG's bounds on a normalisation ratio with a zero count.
constexpr float unseen_ratio = 0.1f;
constexpr float max_ratio = 1e4f;
// Presampled subgraphs drawn at once before the coverage is checked: up to
// 64, holding about 2^22 draws together at most, so that a large budget
// does not hold 64 large subgraphs at once.
constexpr std::int64_t max_presample_chunk = 64;
constexpr double presample_chunk_draws = 1 << 22;

// Uniform integer in [0, bound) for 0 < bound < 2^63, exactly uniform: the
// 2^64 mod bound lowest words are rejected, so every residue is equally likely.
std::int64_t uniform_index_below(philox_stream& rng, std::int64_t bound) {
  if (bound < (std::int64_t{1} << 32)) return rng.uniform_below(static_cast<std::uint32_t>(bound));
  const auto b = static_cast<std::uint64_t>(bound);
  const std::uint64_t biased = (0 - b) % b;
  for (;;) {
    const std::uint64_t word = rng.next_u64();
    if (word >= biased) return static_cast<std::int64_t>(word % b);
  }
}

// The row holding entry `e` of `graph` (indptr from 0).
vertex_t row_of_entry(const csr_matrix& graph, edge_t e) {
  const auto* begin = graph.indptr.data();
  const auto* end = begin + graph.rows + 1;
  return static_cast<vertex_t>(std::upper_bound(begin, end, e) - begin - 1);
}

// `graph` on the host with each row's columns ascending, without values.
csr_matrix rows_with_ascending_columns(csr_view graph) {
  csr_matrix sorted;
  sorted.rows = graph.rows;
  sorted.cols = graph.cols;
  sorted.indptr = buffer<edge_t>(static_cast<std::size_t>(graph.rows) + 1);
  sorted.indices = buffer<vertex_t>(static_cast<std::size_t>(graph.nnz()));
  for (std::int64_t v = 0; v <= graph.rows; ++v)
    sorted.indptr.data()[v] = graph.indptr[v] - graph.indptr[0];
  for (std::int64_t v = 0; v < graph.rows; ++v) {
    const auto row = graph.row(v);
    auto* out = sorted.indices.data() + sorted.indptr.data()[v];
    std::copy(row.begin(), row.end(), out);
    std::sort(out, out + row.size());
  }
  return sorted;
}

double saint_vertices_per_draw(const saint_settings& s) {
  switch (s.draw) {
    case saint_draw::node:
      return 1.0;
    case saint_draw::edge:
      return 2.0;
    case saint_draw::random_walk:
      return static_cast<double>(s.walk_length + 1);
  }
  return 1.0;
}

// The positions of a segment's first `count` vertices, set in `position`
// and reset to -1 when it goes, also on a throw.
struct positions_of_segment {
  std::vector<vertex_t>& position;
  std::span<const vertex_t> segment;
  std::size_t count = 0;

  positions_of_segment(std::vector<vertex_t>& position_of, std::span<const vertex_t> vertices)
      : position(position_of), segment(vertices) {}
  positions_of_segment(const positions_of_segment&) = delete;
  positions_of_segment& operator=(const positions_of_segment&) = delete;
  ~positions_of_segment() {
    for (std::size_t i = 0; i < count; ++i) position[segment[i]] = -1;
  }
};

}  // namespace

saint_subgraphs::saint_subgraphs(csr_view graph, const saint_settings& settings, executor exec)
    : settings_(settings), exec_(std::move(exec)) {
  BULKGNN_EXPECTS(host_accessible(graph.space),
                  "saint_subgraphs: the graph must be in host memory");
  BULKGNN_EXPECTS(graph.rows > 0 && graph.nnz() > 0,
                  "a GraphSAINT sampler: the graph has no edges to draw subgraphs from");
  BULKGNN_EXPECTS(settings.budget > 0,
                  "loader_options.batch_size: a GraphSAINT sampler's budget (vertices, edges or "
                  "walk roots per subgraph) must be positive, got {}",
                  settings.budget);
  BULKGNN_EXPECTS(settings.coverage >= 1,
                  "sampler_options: the GraphSAINT parameter coverage must be at least 1, got {}",
                  settings.coverage);
  graph_ = rows_with_ascending_columns(graph);
  if (settings_.draw == saint_draw::edge) {
    // Cumulative in double, in entry order: the same bits on every machine.
    edge_cumulative_.resize(static_cast<std::size_t>(graph_.nnz()));
    double total = 0.0;
    const auto inverse_degree = [&](vertex_t v) {
      return 1.0 / static_cast<double>(std::max<edge_t>(1, graph_.view().degree(v)));
    };
    for (vertex_t v = 0; v < graph_.rows; ++v)
      for (edge_t e = graph_.indptr.data()[v]; e < graph_.indptr.data()[v + 1]; ++e) {
        total += inverse_degree(v) + inverse_degree(graph_.indices.data()[e]);
        edge_cumulative_[static_cast<std::size_t>(e)] = total;
      }
  }
  presample_or_read_kept();
  normalise();
}

namespace {

// Bumped when the presampling's draws, streams or stopping rule change.
constexpr std::uint64_t presampling_version = 1;

// The presampling's key: the graph with sorted rows (what is counted) and
// every setting that shapes the presampled subgraphs (not steps).
std::uint64_t saint_counts_key(csr_view sorted_graph, const saint_settings& settings) {
  auto hasher = detail::topology_hasher(sorted_graph);
  hasher.add(presampling_version);
  for (const auto value :
       {static_cast<std::int64_t>(settings.draw), settings.budget, settings.walk_length,
        settings.coverage, static_cast<std::int64_t>(settings.seed)})
    hasher.add(static_cast<std::uint64_t>(value));
  return hasher.value();
}

}  // namespace

std::filesystem::path kept_saint_counts_file(csr_view graph, const saint_settings& settings) {
  const auto sorted = rows_with_ascending_columns(graph);
  return detail::kept_file(settings.cache_dir, "graphsaint",
                           saint_counts_key(sorted.view(), settings));
}

void saint_subgraphs::presample_or_read_kept() {
  if (settings_.cache_dir.empty()) return presample();
  const auto key = saint_counts_key(graph_.view(), settings_);
  const auto file = detail::kept_file(settings_.cache_dir, "graphsaint", key);
  if (read_kept(file, key)) return;
  presample();
  const std::span<const std::int64_t> presampled(&presampled_, 1);
  const std::span<const std::byte> arrays[] = {std::as_bytes(presampled),
                                               std::as_bytes(std::span(vertex_counts_)),
                                               std::as_bytes(std::span(edge_counts_))};
  detail::write_kept(file, key, arrays);
}

bool saint_subgraphs::read_kept(const std::filesystem::path& file, std::uint64_t key) {
  std::int64_t presampled = 0;
  std::vector<std::int64_t> vertex_counts(static_cast<std::size_t>(graph_.rows));
  std::vector<std::uint32_t> edge_counts(static_cast<std::size_t>(graph_.nnz()));
  const std::span<std::byte> into[] = {std::as_writable_bytes(std::span(&presampled, 1)),
                                       std::as_writable_bytes(std::span(vertex_counts)),
                                       std::as_writable_bytes(std::span(edge_counts))};
  const auto at_most_presampled = [&](auto count) {
    const auto value = static_cast<std::int64_t>(count);
    return value >= 0 && value <= presampled;
  };
  if (!detail::read_kept(file, key, into) || presampled <= 0 ||
      !std::ranges::all_of(vertex_counts, at_most_presampled) ||
      !std::ranges::all_of(edge_counts, at_most_presampled))
    return false;
  presampled_ = presampled;
  vertex_counts_ = std::move(vertex_counts);
  edge_counts_ = std::move(edge_counts);
  return true;
}

std::int64_t saint_subgraphs::minibatch_count(std::span<const vertex_t>,
                                              std::int64_t batch_size) const {
  BULKGNN_EXPECTS(
      batch_size == settings_.budget,
      "loader_options.batch_size: {} for GraphSAINT subgraphs drawn with a budget of {}",
      batch_size, settings_.budget);
  if (settings_.steps > 0) return settings_.steps;
  const double per_subgraph =
      static_cast<double>(settings_.budget) * saint_vertices_per_draw(settings_);
  return std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(static_cast<double>(graph_.rows) / per_subgraph)));
}

batched_subgraphs saint_subgraphs::batch(std::span<const vertex_t> train, std::int64_t batch_size,
                                         std::uint32_t seed, std::uint32_t epoch) const {
  BULKGNN_EXPECTS(seed == settings_.seed,
                  "saint_subgraphs: made with seed {} but asked for an epoch of seed {}",
                  settings_.seed, seed);
  const auto count = minibatch_count(train, batch_size);
  std::vector<bool> is_train(static_cast<std::size_t>(graph_.rows));
  for (const vertex_t v : train) {
    BULKGNN_EXPECTS(v >= 0 && v < graph_.rows,
                    "epoch_plan: seed vertex {} is outside the graph's {} vertices", v,
                    graph_.rows);
    is_train[v] = true;
  }
  std::vector<std::vector<vertex_t>> drawn(static_cast<std::size_t>(count));
  exec_.run([&] {
    tbb::parallel_for(std::int64_t{0}, count, [&](std::int64_t j) { drawn[j] = draw(epoch, j); });
  });
  batched_subgraphs batched;
  std::vector<vertex_t> seeds;
  for (const auto& vertices : drawn) {
    seeds.clear();
    for (const vertex_t v : vertices)
      if (is_train[v]) seeds.push_back(v);
    batched.push(seeds, vertices);
  }
  return batched;
}

std::vector<vertex_t> saint_subgraphs::draw(std::uint32_t epoch, std::int64_t index) const {
  BULKGNN_EXPECTS(index >= 0 && index < no_minibatch, "saint_subgraphs: subgraph index {}", index);
  return draw_from(
      rng_key{settings_.seed, epoch, static_cast<std::uint32_t>(index), saint_stream, 0});
}

std::vector<vertex_t> saint_subgraphs::draw_presampled(std::int64_t index) const {
  BULKGNN_EXPECTS(index >= 0 && index < no_minibatch, "saint_subgraphs: subgraph index {}", index);
  return draw_from(
      rng_key{settings_.seed, 0, static_cast<std::uint32_t>(index), saint_presample_stream, 0});
}

std::vector<vertex_t> saint_subgraphs::draw_from(const rng_key& key) const {
  philox_stream rng(key);
  const csr_view g = graph_.view();
  std::vector<vertex_t> vertices;
  switch (settings_.draw) {
    case saint_draw::node:
      // A uniform entry's row: a vertex with probability ∝ its degree.
      for (std::int64_t i = 0; i < settings_.budget; ++i)
        vertices.push_back(row_of_entry(graph_, uniform_index_below(rng, g.nnz())));
      break;
    case saint_draw::edge:
      for (std::int64_t i = 0; i < settings_.budget; ++i) {
        const double x = rng.uniform_open01() * edge_cumulative_.back();
        auto e = static_cast<edge_t>(
            std::upper_bound(edge_cumulative_.begin(), edge_cumulative_.end(), x) -
            edge_cumulative_.begin());
        e = std::min<edge_t>(e, g.nnz() - 1);
        vertices.push_back(row_of_entry(graph_, e));
        vertices.push_back(g.column_at(e));
      }
      break;
    case saint_draw::random_walk:
      for (std::int64_t i = 0; i < settings_.budget; ++i) {
        auto at = static_cast<vertex_t>(uniform_index_below(rng, g.rows));
        vertices.push_back(at);
        for (std::int64_t step = 0; step < settings_.walk_length; ++step) {
          const auto degree = g.degree(at);
          // A vertex without neighbours keeps the walk where it is.
          if (degree > 0) at = g.column_at(g.first_entry(at) + uniform_index_below(rng, degree));
          vertices.push_back(at);
        }
      }
      break;
  }
  std::sort(vertices.begin(), vertices.end());
  vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
  return vertices;
}

void saint_subgraphs::presample() {
  const csr_view g = graph_.view();
  vertex_counts_.assign(static_cast<std::size_t>(g.rows), 0);
  edge_counts_.assign(static_cast<std::size_t>(g.nnz()), 0);
  const double wanted = static_cast<double>(settings_.coverage) * static_cast<double>(g.rows);
  double held = 0.0;
  const auto chunk_size = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(presample_chunk_draws / (static_cast<double>(settings_.budget) *
                                                         saint_vertices_per_draw(settings_))),
      1, max_presample_chunk);
  std::vector<std::vector<vertex_t>> chunk(static_cast<std::size_t>(chunk_size));
  // Which presampled subgraph (by index, unique over the presampling) each
  // vertex was last seen in, per thread: whether a neighbour is in the
  // subgraph at hand is one look-up.
  static constexpr std::uint32_t none = 0xFFFFFFFFu;
  tbb::enumerable_thread_specific<std::vector<std::uint32_t>> seen_in(
      [&] { return std::vector<std::uint32_t>(static_cast<std::size_t>(g.rows), none); });
  const auto count = [&](std::int64_t i) {
    const auto& vertices = chunk[static_cast<std::size_t>(i)];
    auto& seen = seen_in.local();
    const auto index = static_cast<std::uint32_t>(presampled_ + i);
    for (const vertex_t v : vertices) seen[v] = index;
    for (const vertex_t v : vertices) {
      std::atomic_ref(vertex_counts_[v]).fetch_add(1, std::memory_order_relaxed);
      for (edge_t e = g.first_entry(v); e < g.end_entry(v); ++e)
        if (seen[g.column_at(e)] == index)
          std::atomic_ref(edge_counts_[static_cast<std::size_t>(e)])
              .fetch_add(1, std::memory_order_relaxed);
    }
  };
  // Subgraphs are drawn a chunk at a time in parallel, taken in index order
  // until they hold enough vertices, and counted in parallel: counts are
  // sums of integers, the same whatever the order.
  while (held < wanted) {
    BULKGNN_EXPECTS(presampled_ + chunk_size < none,
                    "sampler_options: the GraphSAINT parameter coverage {} needs more than 2^32 "
                    "presampled subgraphs",
                    settings_.coverage);
    exec_.run([&] {
      tbb::parallel_for(std::int64_t{0}, chunk_size, [&](std::int64_t i) {
        chunk[static_cast<std::size_t>(i)] = draw_presampled(presampled_ + i);
      });
    });
    std::int64_t taken = 0;
    while (taken < chunk_size && held < wanted)
      held += static_cast<double>(chunk[static_cast<std::size_t>(taken++)].size());
    exec_.run([&] { tbb::parallel_for(std::int64_t{0}, taken, count); });
    presampled_ += taken;
  }
}

void saint_subgraphs::normalise() {
  const csr_view g = graph_.view();
  const auto n = static_cast<double>(g.rows);
  loss_weights_.resize(static_cast<std::size_t>(g.rows));
  edge_weights_.resize(static_cast<std::size_t>(g.nnz()));
  for (vertex_t v = 0; v < g.rows; ++v) {
    const auto count = static_cast<double>(vertex_counts_[v]);
    loss_weights_[v] = static_cast<float>(static_cast<double>(presampled_) /
                                          (std::max(count, double{unseen_ratio}) * n));
    const double mean = 1.0 / static_cast<double>(std::max<edge_t>(1, g.degree(v)));
    for (edge_t e = g.first_entry(v); e < g.end_entry(v); ++e) {
      const auto together = static_cast<double>(edge_counts_[static_cast<std::size_t>(e)]);
      const double ratio = together > 0 ? std::min(count / together, double{max_ratio})
                           : count > 0  ? double{max_ratio}
                                        : double{unseen_ratio};
      edge_weights_[static_cast<std::size_t>(e)] = static_cast<float>(mean * ratio);
    }
  }
}

edge_t saint_subgraphs::find_edge(vertex_t v, vertex_t u) const {
  BULKGNN_EXPECTS(v >= 0 && v < graph_.rows, "saint_subgraphs: vertex {} is outside the graph", v);
  const auto row = graph_.view().row(v);
  const auto at = std::lower_bound(row.begin(), row.end(), u);
  BULKGNN_EXPECTS(at != row.end() && *at == u, "saint_subgraphs: ({} <- {}) is no edge", v, u);
  return graph_.indptr.data()[v] + (at - row.begin());
}

float saint_subgraphs::edge_weight(vertex_t v, vertex_t u) const {
  return edge_weights_[static_cast<std::size_t>(find_edge(v, u))];
}

csr_matrix saint_subgraphs::induced_subgraphs(const segmented_vertices& vertices) const {
  const csr_view g = graph_.view();
  const auto total = static_cast<std::size_t>(vertices.vertices.size());
  // Each vertex's position in the segment at hand; -1 outside it (and for
  // every vertex between calls: each segment resets what it set, also when
  // it throws). This thread's, so that a bulk costs its subgraphs, not the
  // graph's size; the workers below read it through `position`.
  static thread_local std::vector<vertex_t> positions_of_this_thread;
  auto& position = positions_of_this_thread;
  if (std::ssize(position) < g.rows) position.resize(static_cast<std::size_t>(g.rows), -1);
  // Counted, then written in place: a row's entries are found twice rather
  // than each row growing a vector of its own (allocations dominated).
  std::vector<edge_t> indptr(total + 1, 0);
  std::vector<vertex_t> indices;
  std::vector<float> values;
  std::int64_t widest = 0;
  for (std::int64_t j = 0; j < vertices.segments(); ++j) {
    const auto segment = vertices.segment(j);
    widest = std::max(widest, std::ssize(segment));
    positions_of_segment placed{position, segment};
    for (; placed.count < segment.size(); ++placed.count) {
      const vertex_t v = segment[placed.count];
      BULKGNN_EXPECTS(v >= 0 && v < g.rows && position[v] < 0,
                      "saint_subgraphs: vertex {} is outside the graph or listed twice in "
                      "subgraph {}",
                      v, j);
      position[v] = static_cast<vertex_t>(placed.count);
    }
    const auto first = static_cast<std::size_t>(vertices.offsets[j]);
    // Raw pointers: the loops below are bound by their random reads of
    // `at`, which the compiler would otherwise reload through references.
    const vertex_t* at = position.data();
    const vertex_t* columns = g.indices.data();
    const edge_t* row_start = g.indptr.data();
    // Isolated: while this thread waits for the workers it takes no other
    // task, which could call this function and reuse its positions.
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(std::size_t{0}, segment.size(), [&](std::size_t i) {
        const vertex_t v = segment[i];
        edge_t inside = 0;
        for (edge_t e = row_start[v]; e < row_start[v + 1]; ++e)
          inside += at[columns[e]] >= 0 ? 1 : 0;
        indptr[first + i + 1] = inside;
      });
      for (std::size_t i = 0; i < segment.size(); ++i) indptr[first + i + 1] += indptr[first + i];
      indices.resize(static_cast<std::size_t>(indptr[first + segment.size()]));
      values.resize(indices.size());
      const float* weights = edge_weights_.data();
      tbb::parallel_for(std::size_t{0}, segment.size(), [&](std::size_t i) {
        const vertex_t v = segment[i];
        const auto begin = static_cast<std::size_t>(indptr[first + i]);
        const auto end = static_cast<std::size_t>(indptr[first + i + 1]);
        vertex_t* local = indices.data() + begin;
        float* weight = values.data() + begin;
        for (edge_t e = row_start[v]; e < row_start[v + 1]; ++e)
          if (const vertex_t column = at[columns[e]]; column >= 0) {
            *local++ = column;
            *weight++ = weights[e];
          }
        // Local ids ascending; repeated edges carry equal weights (equal
        // counts), so any order among them writes the same row.
        if (std::is_sorted(indices.data() + begin, indices.data() + end)) return;
        static thread_local std::vector<std::pair<vertex_t, float>> row;
        row.clear();
        for (auto k = begin; k < end; ++k) row.emplace_back(indices[k], values[k]);
        std::sort(row.begin(), row.end());
        for (auto k = begin; k < end; ++k) std::tie(indices[k], values[k]) = row[k - begin];
      });
    });
  }
  csr_matrix induced;
  induced.rows = static_cast<std::int64_t>(total);
  induced.cols = widest;
  induced.indptr = buffer<edge_t>(indptr.size());
  std::copy(indptr.begin(), indptr.end(), induced.indptr.data());
  induced.indices = buffer<vertex_t>(indices.size());
  std::copy(indices.begin(), indices.end(), induced.indices.data());
  induced.values = buffer<float>(values.size());
  std::copy(values.begin(), values.end(), induced.values.data());
  return induced;
}

std::int64_t saint_subgraphs::edge_count(vertex_t v, vertex_t u) const {
  return edge_counts_[static_cast<std::size_t>(find_edge(v, u))];
}

saint_settings saint_settings_of(const sampler_options& options, std::int64_t budget) {
  const std::string_view kind = find_sampler(options.kind).name;
  saint_settings s{.budget = budget,
                   .steps = parameter(options, "steps"),
                   .coverage = parameter(options, "coverage"),
                   .seed = options.seed,
                   .cache_dir = options.cache_dir};
  if (kind == "saint-edge") {
    s.draw = saint_draw::edge;
  } else if (kind == "saint-rw") {
    s.draw = saint_draw::random_walk;
    s.walk_length = parameter(options, "walk_length");
  } else {
    BULKGNN_EXPECTS(kind == "saint-node", "saint_settings_of: {} is no GraphSAINT sampler", kind);
  }
  return s;
}

std::shared_ptr<const subgraph_batches> saint_batching(csr_view graph,
                                                       const sampler_options& options,
                                                       std::int64_t batch_size,
                                                       const executor& exec) {
  return std::make_shared<const saint_subgraphs>(graph, saint_settings_of(options, batch_size),
                                                 exec);
}

}  // namespace bulkgnn::sampler
