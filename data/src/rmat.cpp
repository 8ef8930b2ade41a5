#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/generators.hpp"
#include "generator_util.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bulkgnn::data {

namespace {

// Vertex ids must fit vertex_t (int32).
constexpr int max_scale = 31;
constexpr std::int64_t edges_per_chunk = std::int64_t{1} << 20;
// Each recursion level consumes 16 random bits: probabilities are quantised to
// 2^-16, far below the sampling noise of any graph that fits in memory.
constexpr int levels_per_word = 4;
constexpr double threshold_scale = 65536.0;

void validate(const rmat_options& options) {
  BULKGNN_EXPECTS(options.scale >= 1 && options.scale <= max_scale,
                  "generate_rmat: scale must be in [1, {}], got {}", max_scale, options.scale);
  BULKGNN_EXPECTS(options.edge_factor >= 1, "generate_rmat: edge_factor must be >= 1, got {}",
                  options.edge_factor);
  const double d = 1.0 - options.a - options.b - options.c;
  BULKGNN_EXPECTS(options.a >= 0 && options.b >= 0 && options.c >= 0 && d >= -1e-12,
                  "generate_rmat: a, b, c must be >= 0 with a + b + c <= 1, got {}, {}, {}",
                  options.a, options.b, options.c);
  BULKGNN_EXPECTS(options.features >= 0, "generate_rmat: features must be >= 0, got {}",
                  options.features);
  BULKGNN_EXPECTS(options.classes >= 0, "generate_rmat: classes must be >= 0, got {}",
                  options.classes);
}

std::uint64_t reverse_bits(std::uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

// Graph500 scrambles vertex labels so that degree does not follow the id.
// Like its reference code this uses a keyed bijection of [0, 2^bits) instead
// of a stored permutation, which would cost a random memory read per endpoint:
// adding, multiplying by an odd number and reversing the bits are each
// bijective, and alternating them spreads every bit over all the others.
class vertex_scramble {
 public:
  vertex_scramble(int bits, std::uint32_t seed) : bits_(bits), mask_((1ULL << bits) - 1) {
    philox_stream stream(detail::generator_key(seed, detail::purpose::vertex_scramble, 0));
    offset_ = stream.next_u64() & mask_;
    multiplier1_ = stream.next_u64() | 1;
    multiplier2_ = stream.next_u64() | 1;
  }

  [[nodiscard]] std::uint32_t operator()(std::uint64_t v) const {
    v = ((v + offset_) * multiplier1_) & mask_;
    v = (reverse(v) * multiplier2_) & mask_;
    return static_cast<std::uint32_t>(reverse(v));
  }

 private:
  [[nodiscard]] std::uint64_t reverse(std::uint64_t v) const {
    return reverse_bits(v) >> (64 - bits_);
  }

  int bits_;
  std::uint64_t mask_;
  std::uint64_t offset_ = 0;
  std::uint64_t multiplier1_ = 1;
  std::uint64_t multiplier2_ = 1;
};

// Draws the generated edges chunk by chunk; a chunk's edges depend only on the
// seed and the chunk number.
class rmat_sampler {
 public:
  explicit rmat_sampler(const rmat_options& options)
      : scale_(options.scale),
        seed_(options.seed),
        edges_(static_cast<edge_t>(options.edge_factor) << options.scale),
        scramble_(options.scale, options.seed),
        below_b_(threshold(options.a)),
        below_c_(threshold(options.a + options.b)),
        below_d_(threshold(options.a + options.b + options.c)) {}

  [[nodiscard]] std::int64_t chunks() const {
    return (edges_ + edges_per_chunk - 1) / edges_per_chunk;
  }

  template <class Add>
  void emit_chunk(std::int64_t chunk, Add&& add) const {
    const edge_t count = std::min(edges_per_chunk, edges_ - chunk * edges_per_chunk);
    detail::fast_rng rng(detail::generator_key(seed_, detail::purpose::edges, chunk));
    for (edge_t e = 0; e < count; ++e) {
      std::uint64_t src = 0;
      std::uint64_t dst = 0;
      std::uint64_t bits = 0;
      for (int level = 0; level < scale_; ++level) {
        if (level % levels_per_word == 0) bits = rng.next_u64();
        const auto r = static_cast<std::uint32_t>(bits & 0xFFFF);
        bits >>= 16;
        // Quadrants a, b, c, d are (src bit, dst bit) = 00, 01, 10, 11.
        const unsigned quadrant = (r >= below_b_) + (r >= below_c_) + (r >= below_d_);
        src = (src << 1) | (quadrant >> 1);
        dst = (dst << 1) | (quadrant & 1);
      }
      add(scramble_(src), scramble_(dst));
    }
  }

 private:
  static std::uint32_t threshold(double p) {
    return static_cast<std::uint32_t>(std::lround(std::clamp(p, 0.0, 1.0) * threshold_scale));
  }

  int scale_;
  std::uint32_t seed_;
  edge_t edges_;
  vertex_scramble scramble_;
  std::uint32_t below_b_;
  std::uint32_t below_c_;
  std::uint32_t below_d_;
};

std::vector<std::int32_t> random_labels(std::int64_t nodes, int classes, std::uint32_t seed) {
  std::vector<std::int32_t> labels(static_cast<std::size_t>(nodes));
  tbb::parallel_for(std::int64_t{0}, nodes, [&](std::int64_t node) {
    philox_stream stream(detail::generator_key(seed, detail::purpose::labels, node));
    labels[node] =
        static_cast<std::int32_t>(stream.uniform_below(static_cast<std::uint32_t>(classes)));
  });
  return labels;
}

nlohmann::json generator_fields(const rmat_options& options) {
  return {{"type", "rmat"},
          {"scale", options.scale},
          {"edge_factor", options.edge_factor},
          {"a", options.a},
          {"b", options.b},
          {"c", options.c},
          {"undirected", options.undirected},
          {"weights", options.weights},
          {"seed", options.seed}};
}

}  // namespace

void generate_rmat(const std::filesystem::path& out_dir, const rmat_options& options) {
  validate(options);
  const std::int64_t nodes = std::int64_t{1} << options.scale;
  native_writer writer(out_dir);
  const rmat_sampler sampler(options);
  detail::csr_assembler assembler(nodes, options.undirected, "rmat", options.quiet);
  const edge_t edges =
      assembler.build(writer, sampler.chunks(),
                      [&](std::int64_t chunk, auto&& add) { sampler.emit_chunk(chunk, add); });
  if (options.weights) detail::write_edge_weights(writer, options.seed, options.quiet);
  if (options.features > 0)
    detail::write_features(writer, nodes, options.features, options.seed, {}, {}, options.quiet);
  nlohmann::json splits = nlohmann::json::array();
  if (options.classes > 0) {
    detail::write_labels(writer, random_labels(nodes, options.classes, options.seed));
    splits = detail::write_random_split(writer, nodes, options.seed);
  }
  writer.commit({{"name", fmt::format("rmat-s{}-e{}", options.scale, options.edge_factor)},
                 {"generator", generator_fields(options)},
                 {"num_nodes", nodes},
                 {"num_edges", edges},
                 {"num_features", options.features},
                 {"num_classes", options.classes},
                 {"splits", splits}});
}

}  // namespace bulkgnn::data
