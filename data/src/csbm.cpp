#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/generators.hpp"
#include "generator_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace bulkgnn::data {

namespace {

constexpr std::int64_t min_nodes_per_chunk = std::int64_t{1} << 14;
// Caps the chunk count, and so the assembler's chunk x bucket table, on huge
// graphs; the chunking depends only on the node count, never on threads.
constexpr std::int64_t max_chunks = 1024;

void validate(const csbm_options& options) {
  BULKGNN_EXPECTS(options.nodes >= 2 && options.nodes <= std::numeric_limits<vertex_t>::max(),
                  "generate_csbm: nodes must be in [2, 2^31), got {}", options.nodes);
  BULKGNN_EXPECTS(options.classes >= 2 && options.classes <= options.nodes,
                  "generate_csbm: classes must be in [2, nodes], got {}", options.classes);
  BULKGNN_EXPECTS(std::isfinite(options.average_degree) && options.average_degree >= 0,
                  "generate_csbm: average_degree must be >= 0, got {}", options.average_degree);
  BULKGNN_EXPECTS(options.homophily >= 0 && options.homophily <= 1,
                  "generate_csbm: homophily must be in [0, 1], got {}", options.homophily);
  BULKGNN_EXPECTS(options.features >= 0, "generate_csbm: features must be >= 0, got {}",
                  options.features);
  BULKGNN_EXPECTS(std::isfinite(options.signal) && options.signal >= 0,
                  "generate_csbm: signal must be >= 0, got {}", options.signal);
}

// Classes are dealt round-robin over a random order of the nodes, so they are
// balanced (sizes differ by at most one) yet unrelated to node ids.
struct class_layout {
  std::vector<std::int32_t> labels;
  std::vector<vertex_t> members;      // nodes grouped by class
  std::vector<std::int64_t> offsets;  // class c is members[offsets[c] .. offsets[c + 1])

  class_layout(std::int64_t nodes, int classes, std::uint32_t seed)
      : labels(static_cast<std::size_t>(nodes)), offsets{0} {
    const auto order = detail::random_permutation(nodes, seed, detail::purpose::class_assignment);
    members.reserve(order.size());
    for (int c = 0; c < classes; ++c) {
      for (std::int64_t i = c; i < nodes; i += classes) {
        labels[order[i]] = c;
        members.push_back(order[i]);
      }
      offsets.push_back(static_cast<std::int64_t>(members.size()));
    }
  }
};

// Draws each node's edge endpoints: a node of its own class with probability
// homophily, else a uniform node of any other class.
class csbm_sampler {
 public:
  csbm_sampler(const csbm_options& options, const class_layout& layout)
      : options_(options),
        layout_(layout),
        same_class_below_(static_cast<std::uint64_t>(std::ldexp(options.homophily, 32))),
        nodes_per_chunk_(
            std::max(min_nodes_per_chunk, (options.nodes + max_chunks - 1) / max_chunks)),
        draws_(std::floor(options.average_degree / 2)),
        extra_draw_probability_(options.average_degree / 2 - draws_) {}

  [[nodiscard]] std::int64_t chunks() const {
    return (options_.nodes + nodes_per_chunk_ - 1) / nodes_per_chunk_;
  }

  template <class Add>
  void emit_chunk(std::int64_t chunk, Add&& add) const {
    philox_stream stream(detail::generator_key(options_.seed, detail::purpose::edges, chunk));
    const std::int64_t end = std::min(options_.nodes, (chunk + 1) * nodes_per_chunk_);
    for (std::int64_t node = chunk * nodes_per_chunk_; node < end; ++node) {
      // Each draw adds two entries (both directions), hence half the degree.
      const auto draws =
          static_cast<std::int64_t>(draws_) + (stream.uniform_open01() < extra_draw_probability_);
      for (std::int64_t i = 0; i < draws; ++i)
        add(static_cast<std::uint32_t>(node), endpoint(stream, layout_.labels[node]));
    }
  }

 private:
  std::uint32_t endpoint(philox_stream& stream, int label) const {
    const std::int64_t begin = layout_.offsets[label];
    const auto size = static_cast<std::uint32_t>(layout_.offsets[label + 1] - begin);
    std::int64_t index = 0;
    if (stream.next_u32() < same_class_below_) {
      index = begin + stream.uniform_below(size);
    } else {
      index = stream.uniform_below(static_cast<std::uint32_t>(options_.nodes - size));
      if (index >= begin) index += size;
    }
    return static_cast<std::uint32_t>(layout_.members[index]);
  }

  const csbm_options& options_;
  const class_layout& layout_;
  std::uint64_t same_class_below_;
  std::int64_t nodes_per_chunk_;
  double draws_;
  double extra_draw_probability_;
};

// Class means: independent random directions scaled to norm `signal`.
std::vector<float> class_means(const csbm_options& options) {
  const auto width = static_cast<std::size_t>(options.features);
  std::vector<float> means(static_cast<std::size_t>(options.classes) * width);
  for (int c = 0; c < options.classes; ++c) {
    philox_stream stream(detail::generator_key(options.seed, detail::purpose::class_directions, c));
    const std::span<float> mean(means.data() + c * width, width);
    double norm2 = 0;
    for (auto& x : mean) {
      x = static_cast<float>(stream.normal());
      norm2 += static_cast<double>(x) * x;
    }
    const double scale = norm2 > 0 ? options.signal / std::sqrt(norm2) : 0.0;
    for (auto& x : mean) x = static_cast<float>(x * scale);
  }
  return means;
}

nlohmann::json generator_fields(const csbm_options& options) {
  return {{"type", "csbm"},
          {"nodes", options.nodes},
          {"classes", options.classes},
          {"average_degree", options.average_degree},
          {"homophily", options.homophily},
          {"features", options.features},
          {"signal", options.signal},
          {"seed", options.seed}};
}

}  // namespace

void generate_csbm(const std::filesystem::path& out_dir, const csbm_options& options) {
  validate(options);
  native_writer writer(out_dir);
  const class_layout layout(options.nodes, options.classes, options.seed);
  const csbm_sampler sampler(options, layout);
  detail::csr_assembler assembler(options.nodes, /*symmetric=*/true, "csbm", options.quiet);
  const edge_t edges =
      assembler.build(writer, sampler.chunks(),
                      [&](std::int64_t chunk, auto&& add) { sampler.emit_chunk(chunk, add); });
  if (options.features > 0)
    detail::write_features(writer, options.nodes, options.features, options.seed, layout.labels,
                           class_means(options), options.quiet);
  detail::write_labels(writer, layout.labels);
  const auto splits = detail::write_random_split(writer, options.nodes, options.seed);
  writer.commit(
      {{"name", fmt::format("csbm-n{}-c{}-h{}", options.nodes, options.classes, options.homophily)},
       {"generator", generator_fields(options)},
       {"num_nodes", options.nodes},
       {"num_edges", edges},
       {"num_features", options.features},
       {"num_classes", options.classes},
       {"splits", splits}});
}

}  // namespace bulkgnn::data
