#include "bulkgnn/data/generators.hpp"

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/data/dataset.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include "scratch_dir.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;

using bulkgnn::testing::scratch_dir;

std::map<std::string, std::string> read_tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[fs::relative(entry.path(), dir).string()] =
        std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

// Sorted rows with distinct entries and no self loops, in a well-formed CSR.
void expect_simple_sorted_graph(csr_view g) {
  ASSERT_EQ(find_csr_problem(g), "");
  for (std::int64_t r = 0; r < g.rows; ++r) {
    const auto row = g.row(r);
    ASSERT_TRUE(std::adjacent_find(row.begin(), row.end(), std::greater_equal<>()) == row.end())
        << "row " << r << " is not strictly increasing";
    ASSERT_FALSE(std::binary_search(row.begin(), row.end(), static_cast<vertex_t>(r)))
        << "self loop at " << r;
  }
}

bool is_symmetric(csr_view g) {
  for (std::int64_t r = 0; r < g.rows; ++r)
    for (const vertex_t c : g.row(r)) {
      const auto back = g.row(c);
      if (!std::binary_search(back.begin(), back.end(), static_cast<vertex_t>(r))) return false;
    }
  return true;
}

void expect_random_split(const dataset& d) {
  const split& s = d.find_split("random");
  const std::int64_t n = d.num_nodes();
  EXPECT_EQ(static_cast<std::int64_t>(s.train.size()), n * 3 / 5);
  EXPECT_EQ(static_cast<std::int64_t>(s.valid.size()), n / 5);
  EXPECT_EQ(static_cast<std::int64_t>(s.train.size() + s.valid.size() + s.test.size()), n);
  std::vector<vertex_t> all;
  for (const auto part : {s.train, s.valid, s.test}) {
    EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end());
  for (std::int64_t v = 0; v < n; ++v)
    ASSERT_EQ(all[v], v) << "split parts do not cover the nodes once";
}

// Distinct non-loop pairs among edge_factor * 2^scale R-MAT draws, simulated
// directly with an unrelated generator.
std::int64_t simulated_rmat_edges(int scale, int edge_factor, std::uint64_t seed) {
  const rmat_options o;
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::set<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::int64_t e = 0; e < (std::int64_t{edge_factor} << scale); ++e) {
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    for (int level = 0; level < scale; ++level) {
      const double r = uniform(engine);
      const int quadrant = (r >= o.a) + (r >= o.a + o.b) + (r >= o.a + o.b + o.c);
      src = (src << 1) | (quadrant >> 1);
      dst = (dst << 1) | (quadrant & 1);
    }
    if (src != dst) edges.emplace(src, dst);
  }
  return static_cast<std::int64_t>(edges.size());
}

TEST(GenerateRmat, WritesSortedSimpleGraphWithFeaturesLabelsAndSplit) {
  scratch_dir dir;
  generate_rmat(dir / "g",
                {.scale = 12, .edge_factor = 16, .features = 5, .classes = 3, .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  d.validate();
  EXPECT_EQ(d.name(), "rmat-s12-e16");
  EXPECT_EQ(d.num_nodes(), 4096);
  EXPECT_EQ(d.manifest()["generator"]["scale"], 12);
  expect_simple_sorted_graph(d.graph());
  EXPECT_EQ(d.features().rows, 4096);
  EXPECT_EQ(d.features().cols, 5);
  EXPECT_EQ(d.num_classes(), 3);
  std::vector<std::int64_t> per_class(3);
  for (const auto label : d.labels()) ++per_class.at(label);
  for (const auto count : per_class) EXPECT_GT(count, 4096 / 3 - 200);
  expect_random_split(d);
}

// The thread counts compared with one thread. Under the sanitizers, which
// check memory rather than bits and run each generation several times slower,
// the odd count alone.
#ifdef BULKGNN_SANITIZED_BUILD
constexpr int generator_thread_counts[] = {3};
#else
constexpr int generator_thread_counts[] = {2, 3};
#endif

TEST(GenerateRmat, SameSeedGivesIdenticalBytesForAnyThreadCount) {
  scratch_dir dir;
  // Four edge chunks, so that threads really interleave them.
  const rmat_options options{
      .scale = 16, .edge_factor = 64, .features = 3, .classes = 4, .seed = 7, .quiet = true};
  {
    thread_limit one(1);
    generate_rmat(dir / "one", options);
  }
  for (const int threads : generator_thread_counts) {
    thread_limit limit(threads);
    generate_rmat(dir / std::to_string(threads), options);
    EXPECT_TRUE(read_tree(dir / "one") == read_tree(dir / std::to_string(threads)))
        << threads << " threads";
  }
}

TEST(GenerateRmat, DifferentSeedsGiveDifferentGraphs) {
  scratch_dir dir;
  generate_rmat(dir / "a", {.scale = 10, .seed = 1, .quiet = true});
  generate_rmat(dir / "b", {.scale = 10, .seed = 2, .quiet = true});
  const dataset a = dataset::open_native(dir / "a");
  const dataset b = dataset::open_native(dir / "b");
  const auto ai = a.graph().indices;
  const auto bi = b.graph().indices;
  EXPECT_FALSE(std::equal(ai.begin(), ai.end(), bi.begin(), bi.end()));
}

TEST(GenerateRmat, InDegreeDistributionIsSkewed) {
  scratch_dir dir;
  generate_rmat(dir / "g", {.scale = 14, .edge_factor = 16, .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  const csr_view g = d.graph();
  edge_t max_degree = 0;
  std::int64_t isolated = 0;
  for (std::int64_t r = 0; r < g.rows; ++r) {
    max_degree = std::max(max_degree, g.degree(r));
    isolated += g.degree(r) == 0;
  }
  const double mean = static_cast<double>(g.nnz()) / static_cast<double>(g.rows);
  EXPECT_GT(static_cast<double>(max_degree), 20 * mean);
  // A power-law-like graph leaves many vertices with no in-edges at all.
  EXPECT_GT(isolated, g.rows / 10);
}

TEST(GenerateRmat, EdgeCountAfterDedupMatchesDirectSimulation) {
  scratch_dir dir;
  for (const int scale : {10, 12}) {
    generate_rmat(dir / "g", {.scale = scale, .edge_factor = 16, .quiet = true});
    const auto edges = static_cast<double>(dataset::open_native(dir / "g").num_edges());
    const double expected = 0.5 * static_cast<double>(simulated_rmat_edges(scale, 16, 1) +
                                                      simulated_rmat_edges(scale, 16, 2));
    EXPECT_NEAR(edges / expected, 1.0, 0.01) << "scale " << scale;
    // Duplicates must actually be gone: R-MAT repeats many edges.
    EXPECT_LT(edges, 0.95 * (16 << scale));
  }
}

TEST(GenerateRmat, UndirectedGraphIsSymmetric) {
  scratch_dir dir;
  generate_rmat(dir / "d", {.scale = 12, .quiet = true});
  generate_rmat(dir / "u", {.scale = 12, .undirected = true, .quiet = true});
  const dataset directed = dataset::open_native(dir / "d");
  const dataset undirected = dataset::open_native(dir / "u");
  expect_simple_sorted_graph(undirected.graph());
  EXPECT_TRUE(is_symmetric(undirected.graph()));
  EXPECT_FALSE(is_symmetric(directed.graph()));
  EXPECT_GT(undirected.num_edges(), directed.num_edges());
  EXPECT_LE(undirected.num_edges(), 2 * directed.num_edges());
}

// Weights are uniform in (0, 1] and keyed by the unordered pair, so an
// undirected edge weighs the same both ways and a seed fixes them.
TEST(GenerateRmat, WeightsAreUniformInZeroOneAndTheSameBothWays) {
  scratch_dir dir;
  generate_rmat(dir / "w",
                {.scale = 12, .undirected = true, .weights = true, .seed = 3, .quiet = true});
  const dataset d = dataset::open_native(dir / "w");
  const csr_view g = d.graph();
  ASSERT_TRUE(g.weighted());
  double sum = 0;
  std::int64_t below_quarter = 0;
  for (std::int64_t v = 0; v < g.rows; ++v) {
    const auto row = g.row(v);
    const auto weights = g.row_values(v);
    for (std::size_t k = 0; k < row.size(); ++k) {
      ASSERT_GT(weights[k], 0.0F);
      ASSERT_LE(weights[k], 1.0F);
      sum += weights[k];
      below_quarter += weights[k] <= 0.25F;
      const auto back = g.row(row[k]);
      const auto at = std::lower_bound(back.begin(), back.end(), static_cast<vertex_t>(v));
      ASSERT_TRUE(at != back.end() && *at == v);
      ASSERT_EQ(g.row_values(row[k])[static_cast<std::size_t>(at - back.begin())], weights[k]);
    }
  }
  // Each unordered pair is one draw: the mean and the quartile over the
  // stored entries (two per pair) are those of U(0, 1] within a few sigma.
  const double pairs = static_cast<double>(g.nnz()) / 2;
  EXPECT_NEAR(sum / g.nnz(), 0.5, 4 * std::sqrt(1.0 / 12 / pairs));
  EXPECT_NEAR(static_cast<double>(below_quarter) / g.nnz(), 0.25, 4 * std::sqrt(0.1875 / pairs));
  generate_rmat(dir / "again",
                {.scale = 12, .undirected = true, .weights = true, .seed = 3, .quiet = true});
  const dataset again = dataset::open_native(dir / "again");
  EXPECT_TRUE(std::equal(g.values.begin(), g.values.end(), again.graph().values.begin(),
                         again.graph().values.end()));
}

TEST(GenerateRmat, RejectsImpossibleOptions) {
  scratch_dir dir;
  EXPECT_THROW(generate_rmat(dir / "g", {.scale = 0}), option_error);
  EXPECT_THROW(generate_rmat(dir / "g", {.scale = 32}), option_error);
  EXPECT_THROW(generate_rmat(dir / "g", {.a = 0.6, .b = 0.3, .c = 0.3}), option_error);
  EXPECT_FALSE(fs::exists(dir / "g"));
}

struct csbm_stats {
  double homophily = 0;
  double mean_degree = 0;
};

csbm_stats measure(const dataset& d) {
  const csr_view g = d.graph();
  const auto labels = d.labels();
  std::int64_t same = 0;
  for (std::int64_t r = 0; r < g.rows; ++r)
    for (const vertex_t c : g.row(r)) same += labels[r] == labels[c];
  const auto edges = static_cast<double>(g.nnz());
  return {same / edges, edges / static_cast<double>(g.rows)};
}

// Fraction of nodes whose vector lies closest to its own class's centroid.
double nearest_centroid_accuracy(const std::vector<std::vector<double>>& x,
                                 std::span<const std::int32_t> labels, int classes) {
  const std::size_t width = x.front().size();
  std::vector<std::vector<double>> centroid(classes, std::vector<double>(width));
  std::vector<double> count(classes);
  for (std::size_t v = 0; v < x.size(); ++v) {
    ++count[labels[v]];
    for (std::size_t i = 0; i < width; ++i) centroid[labels[v]][i] += x[v][i];
  }
  for (int c = 0; c < classes; ++c)
    for (auto& value : centroid[c]) value /= count[c];
  std::int64_t correct = 0;
  for (std::size_t v = 0; v < x.size(); ++v) {
    int best = 0;
    double best_distance = INFINITY;
    for (int c = 0; c < classes; ++c) {
      double distance = 0;
      for (std::size_t i = 0; i < width; ++i) distance += std::pow(x[v][i] - centroid[c][i], 2);
      if (distance < best_distance) std::tie(best, best_distance) = std::pair(c, distance);
    }
    correct += best == labels[v];
  }
  return static_cast<double>(correct) / static_cast<double>(x.size());
}

TEST(GenerateCsbm, WritesSymmetricSimpleGraphWithRequestedDegree) {
  scratch_dir dir;
  generate_csbm(dir / "g", {.nodes = 20000, .average_degree = 10, .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  d.validate();
  EXPECT_EQ(d.num_nodes(), 20000);
  EXPECT_EQ(d.name().substr(0, 5), "csbm-");
  expect_simple_sorted_graph(d.graph());
  EXPECT_TRUE(is_symmetric(d.graph()));
  EXPECT_NEAR(measure(d).mean_degree, 10.0, 0.3);
  expect_random_split(d);
}

TEST(GenerateCsbm, ClassesAreBalanced) {
  scratch_dir dir;
  generate_csbm(dir / "g", {.nodes = 10003, .classes = 5, .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  EXPECT_EQ(d.num_classes(), 5);
  std::vector<std::int64_t> per_class(5);
  for (const auto label : d.labels()) ++per_class.at(label);
  const auto [low, high] = std::minmax_element(per_class.begin(), per_class.end());
  EXPECT_LE(*high - *low, 1);
}

TEST(GenerateCsbm, MeasuredEdgeHomophilyMatchesRequest) {
  scratch_dir dir;
  for (const double homophily : {0.9, 0.5, 0.1}) {
    generate_csbm(dir / "g", {.nodes = 20000, .homophily = homophily, .quiet = true});
    EXPECT_NEAR(measure(dataset::open_native(dir / "g")).homophily, homophily, 0.02)
        << "requested " << homophily;
  }
}

TEST(GenerateCsbm, LabelsAreLearnableFromFeaturesAndBetterWithNeighbours) {
  scratch_dir dir;
  const int classes = 4;
  generate_csbm(dir / "g", {.nodes = 8000,
                            .classes = classes,
                            .average_degree = 10,
                            .homophily = 0.8,
                            .features = 16,
                            .signal = 1.0,
                            .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  const auto features = d.features();
  const csr_view g = d.graph();
  std::vector<std::vector<double>> own(g.rows, std::vector<double>(16));
  std::vector<std::vector<double>> mean(g.rows, std::vector<double>(16));
  for (std::int64_t v = 0; v < g.rows; ++v) {
    for (std::size_t i = 0; i < 16; ++i) own[v][i] = features.row(v)[i];
  }
  for (std::int64_t v = 0; v < g.rows; ++v) {
    mean[v] = own[v];
    for (const vertex_t u : g.row(v))
      for (std::size_t i = 0; i < 16; ++i) mean[v][i] += own[u][i];
    for (auto& value : mean[v]) value /= static_cast<double>(g.degree(v) + 1);
  }
  const double from_features = nearest_centroid_accuracy(own, d.labels(), classes);
  const double with_neighbours = nearest_centroid_accuracy(mean, d.labels(), classes);
  EXPECT_GT(from_features, 0.35);  // chance is 0.25
  EXPECT_GT(with_neighbours, from_features + 0.15);
}

TEST(GenerateCsbm, ClassCentroidsLieAtDistanceSignalFromTheOrigin) {
  scratch_dir dir;
  const double signal = 3.0;
  generate_csbm(dir / "g",
                {.nodes = 40000, .classes = 2, .features = 64, .signal = signal, .quiet = true});
  const dataset d = dataset::open_native(dir / "g");
  const auto features = d.features();
  std::vector<std::vector<double>> centroid(2, std::vector<double>(64));
  for (std::int64_t v = 0; v < d.num_nodes(); ++v)
    for (std::int64_t i = 0; i < 64; ++i)
      centroid[d.labels()[v]][i] += features.row(v)[i] / 20000.0;
  for (const auto& c : centroid) {
    double norm2 = 0;
    for (const double x : c) norm2 += x * x;
    // Noise adds about 64 / 20000 to the squared norm.
    EXPECT_NEAR(std::sqrt(norm2), signal, 0.1);
  }
  double distance2 = 0;
  for (std::size_t i = 0; i < 64; ++i) distance2 += std::pow(centroid[0][i] - centroid[1][i], 2);
  // Random directions in 64 dimensions are nearly orthogonal.
  EXPECT_NEAR(std::sqrt(distance2), signal * std::sqrt(2.0), 0.15 * signal);
}

TEST(GenerateCsbm, SameSeedGivesIdenticalBytesForAnyThreadCount) {
  scratch_dir dir;
  const csbm_options options{.nodes = 100000, .features = 8, .seed = 3, .quiet = true};
  {
    thread_limit one(1);
    generate_csbm(dir / "one", options);
  }
  for (const int threads : generator_thread_counts) {
    thread_limit limit(threads);
    generate_csbm(dir / std::to_string(threads), options);
    EXPECT_TRUE(read_tree(dir / "one") == read_tree(dir / std::to_string(threads)))
        << threads << " threads";
  }
}

TEST(GenerateCsbm, DifferentSeedsGiveDifferentGraphs) {
  scratch_dir dir;
  generate_csbm(dir / "a", {.nodes = 5000, .seed = 1, .quiet = true});
  generate_csbm(dir / "b", {.nodes = 5000, .seed = 2, .quiet = true});
  const auto a = read_tree(dir / "a");
  const auto b = read_tree(dir / "b");
  for (const char* file : {"indices.npy", "features.npy", "labels.npy", "split/random/train.npy"})
    EXPECT_NE(a.at(file), b.at(file)) << file;
}

TEST(GenerateCsbm, RejectsImpossibleOptions) {
  scratch_dir dir;
  EXPECT_THROW(generate_csbm(dir / "g", {.classes = 1}), option_error);
  EXPECT_THROW(generate_csbm(dir / "g", {.homophily = 1.5}), option_error);
  EXPECT_THROW(generate_csbm(dir / "g", {.average_degree = -1}), option_error);
  EXPECT_FALSE(fs::exists(dir / "g"));
}

}  // namespace
}  // namespace bulkgnn::data
