#include "bulkgnn/kernels/relabel.hpp"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

// Segments of distinct random vertices, some of them empty, overlapping
// across segments.
segmented_vertices random_segments(std::mt19937_64& gen, std::int64_t segments, vertex_t n,
                                   int largest) {
  segmented_vertices s;
  std::vector<vertex_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::uniform_int_distribution<int> size(0, largest);
  for (std::int64_t j = 0; j < segments; ++j) {
    std::shuffle(all.begin(), all.end(), gen);
    s.push_segment(std::span<const vertex_t>(all).first(static_cast<std::size_t>(size(gen))));
  }
  return s;
}

struct sampled_layer {
  csr_matrix graph;
  segmented_vertices destinations;
  csr_matrix sampled;
};

sampled_layer random_layer(std::uint64_t seed, std::int64_t segments,
                           const row_sampling_options& o) {
  std::mt19937_64 gen(seed);
  sampled_layer layer;
  layer.graph = testing::random_csr(gen, {.rows = 400, .cols = 400, .mean_degree = 12});
  layer.destinations = random_segments(gen, segments, 400, 80);
  std::vector<std::uint32_t> minibatch;
  for (std::int64_t j = 0; j < segments; ++j)
    minibatch.insert(minibatch.end(), static_cast<std::size_t>(layer.destinations.size(j)),
                     static_cast<std::uint32_t>(j));
  layer.sampled =
      sample_rows(cpu_exec, layer.graph.view(), layer.destinations.vertices,
                  {.seed = static_cast<std::uint32_t>(seed), .minibatch_of_row = minibatch}, o);
  return layer;
}

void expect_valid_relabelling(const sampled_layer& layer, const relabelled_blocks& out) {
  const auto& dst = layer.destinations;
  ASSERT_EQ(out.sources.segments(), dst.segments());
  ASSERT_EQ(out.blocks.rows, layer.sampled.rows);
  ASSERT_EQ(out.blocks.indptr, layer.sampled.indptr);
  EXPECT_EQ(testing::bits(out.blocks.values), testing::bits(layer.sampled.values));
  std::int64_t largest = 0;
  for (std::int64_t j = 0; j < dst.segments(); ++j) {
    const auto sources = out.sources.segment(j);
    largest = std::max(largest, out.sources.size(j));
    ASSERT_GE(sources.size(), dst.segment(j).size());
    // Destinations first, in their order; then the rest, each once, in order
    // of first appearance among the segment's sampled entries.
    EXPECT_TRUE(std::equal(dst.segment(j).begin(), dst.segment(j).end(), sources.begin()));
    std::vector<vertex_t> appearance(dst.segment(j).begin(), dst.segment(j).end());
    for (edge_t e = layer.sampled.indptr[dst.offsets[j]];
         e < layer.sampled.indptr[dst.offsets[j + 1]]; ++e)
      if (std::find(appearance.begin(), appearance.end(), layer.sampled.indices[e]) ==
          appearance.end())
        appearance.push_back(layer.sampled.indices[e]);
    EXPECT_TRUE(std::equal(appearance.begin(), appearance.end(), sources.begin(), sources.end()));
    EXPECT_EQ(std::set<vertex_t>(sources.begin(), sources.end()).size(), sources.size());
    // Every block entry maps back to the sampled global (dst, src) pair, and
    // every source is a destination or some sampled neighbour.
    std::set<vertex_t> used(dst.segment(j).begin(), dst.segment(j).end());
    for (std::int64_t r = dst.offsets[j]; r < dst.offsets[j + 1]; ++r)
      for (edge_t e = layer.sampled.indptr[r]; e < layer.sampled.indptr[r + 1]; ++e) {
        const vertex_t local = out.blocks.indices[e];
        ASSERT_GE(local, 0);
        ASSERT_LT(local, static_cast<vertex_t>(sources.size()));
        EXPECT_EQ(sources[local], layer.sampled.indices[e]);
        used.insert(layer.sampled.indices[e]);
      }
    EXPECT_EQ(used.size(), sources.size());
  }
  EXPECT_EQ(out.blocks.cols, largest);
}

TEST(RelabelBySegment, PutsDestinationsFirstAndMapsEveryEntryBackToItsGlobalPair) {
  for (const auto mode : {replacement::without, replacement::with}) {
    const auto layer = random_layer(1, 9, {.fanout = 6, .mode = mode});
    for (const auto& exec : {reference_exec, cpu_exec})
      expect_valid_relabelling(layer,
                               relabel_by_segment(exec, layer.destinations, layer.sampled.view()));
  }
}

TEST(RelabelBySegment, CpuMatchesReferenceOnRandomInputs) {
  for (std::uint64_t seed = 2; seed < 14; ++seed) {
    const auto layer =
        random_layer(seed, static_cast<std::int64_t>(seed % 5),
                     {.fanout = static_cast<std::int64_t>(seed % 7) + 1,
                      .mode = seed % 2 == 0 ? replacement::with : replacement::without});
    const auto expected =
        relabel_by_segment(reference_exec, layer.destinations, layer.sampled.view());
    const auto actual = relabel_by_segment(cpu_exec, layer.destinations, layer.sampled.view());
    EXPECT_EQ(expected.sources.vertices, actual.sources.vertices);
    EXPECT_EQ(expected.sources.offsets, actual.sources.offsets);
    testing::expect_identical(expected.blocks, actual.blocks);
  }
}

TEST(RelabelBySegment, ReferenceRejectsRepeatedDestinationInASegment) {
  segmented_vertices dst;
  dst.push_segment(std::vector<vertex_t>{3, 3});
  csr_matrix sampled;
  sampled.rows = 2;
  sampled.cols = 5;
  sampled.indptr = {0, 0, 0};
  EXPECT_THROW((void)relabel_by_segment(reference_exec, dst, sampled.view()), option_error);
}

TEST(RelabelBySegment, RejectsRowCountOtherThanDestinationCount) {
  segmented_vertices dst;
  dst.push_segment(std::vector<vertex_t>{1, 2, 3});
  csr_matrix sampled;
  sampled.rows = 2;
  sampled.cols = 5;
  sampled.indptr = {0, 0, 0};
  EXPECT_THROW((void)relabel_by_segment(cpu_exec, dst, sampled.view()), option_error);
}

// The spec of extract_blocks written out with a map of stored entries.
csr_matrix naive_blocks(const csr_matrix& a, const segmented_vertices& rows,
                        const segmented_vertices& cols, const std::vector<float>& scale,
                        bool self_loops) {
  std::map<std::pair<vertex_t, vertex_t>, float> stored;
  for (vertex_t u = 0; u < a.rows; ++u)
    for (edge_t e = a.indptr[u]; e < a.indptr[u + 1]; ++e)
      stored[{u, a.indices[e]}] = a.values.empty() ? 1.0f : a.values[e];
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.vertices.size());
  for (std::int64_t j = 0; j < rows.segments(); ++j) {
    out.cols = std::max(out.cols, cols.size(j));
    for (const vertex_t u : rows.segment(j)) {
      for (std::int64_t p = 0; p < cols.size(j); ++p) {
        const vertex_t v = cols.segment(j)[p];
        const auto found = stored.find({u, v});
        const bool loop = self_loops && u == v && found == stored.end();
        if (found == stored.end() && !loop) continue;
        out.indices.push_back(static_cast<vertex_t>(p));
        out.values.push_back((loop ? 1.0f : found->second) * scale[cols.offsets[j] + p]);
      }
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
  }
  return out;
}

struct block_inputs {
  csr_matrix a;
  segmented_vertices rows;
  segmented_vertices cols;
  std::vector<float> scale;
};

// Stores the self loop of every seventh vertex, so that adding loops must skip
// those rows.
csr_matrix with_some_self_loops(const csr_matrix& a) {
  csr_matrix out;
  out.rows = a.rows;
  out.cols = a.cols;
  for (vertex_t u = 0; u < a.rows; ++u) {
    std::vector<std::pair<vertex_t, float>> row;
    for (edge_t e = a.indptr[u]; e < a.indptr[u + 1]; ++e)
      row.emplace_back(a.indices[e], a.values.empty() ? 1.0f : a.values[e]);
    const bool stored =
        std::any_of(row.begin(), row.end(), [&](const auto& x) { return x.first == u; });
    if (u % 7 == 0 && !stored) row.emplace_back(u, 4.0f);
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [v, w] : row) {
      out.indices.push_back(v);
      if (!a.values.empty()) out.values.push_back(w);
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

block_inputs random_block_inputs(std::uint64_t seed, bool weighted, bool repeats) {
  std::mt19937_64 gen(seed);
  block_inputs in;
  in.a = testing::random_csr(
      gen, {.rows = 120, .cols = 120, .mean_degree = 15, .weighted = weighted, .repeats = repeats});
  in.a = with_some_self_loops(in.a);
  const auto segments = static_cast<std::int64_t>(seed % 6);
  in.rows = random_segments(gen, segments, 120, 40);
  in.cols = random_segments(gen, segments, 120, 60);
  std::uniform_real_distribution<float> scale(0.5f, 3.0f);
  for (std::size_t k = 0; k < in.cols.vertices.size(); ++k) in.scale.push_back(scale(gen));
  return in;
}

TEST(ExtractBlocks, MatchesNaiveConstructionWithAndWithoutSelfLoops) {
  for (std::uint64_t seed = 1; seed < 13; ++seed) {
    const auto in = random_block_inputs(seed, seed % 2 == 0, false);
    for (const bool loops : {false, true}) {
      const auto expected = naive_blocks(in.a, in.rows, in.cols, in.scale, loops);
      for (const auto& exec : {reference_exec, cpu_exec})
        testing::expect_identical(
            expected, extract_blocks(exec, in.a.view(), in.rows, in.cols, in.scale, loops));
    }
  }
}

TEST(ExtractBlocks, CpuMatchesReferenceWithRepeatedEntries) {
  for (std::uint64_t seed = 20; seed < 32; ++seed) {
    const auto in = random_block_inputs(seed, seed % 2 == 0, true);
    for (const bool loops : {false, true})
      testing::expect_identical(
          extract_blocks(reference_exec, in.a.view(), in.rows, in.cols, in.scale, loops),
          extract_blocks(cpu_exec, in.a.view(), in.rows, in.cols, in.scale, loops));
  }
}

TEST(ExtractBlocks, AddsSelfLoopsOnlyWhereMissing) {
  csr_matrix a;
  a.rows = 2;
  a.cols = 2;
  a.indptr = {0, 1, 2};
  a.indices = {0, 0};  // vertex 0 stores its loop, vertex 1 does not
  a.values = {7.0f, 5.0f};
  segmented_vertices both;
  both.push_segment(std::vector<vertex_t>{0, 1});
  const std::vector<float> scale{1.0f, 2.0f};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const auto m = extract_blocks(exec, a.view(), both, both, scale, true);
    EXPECT_EQ(m.indptr, (std::vector<edge_t>{0, 1, 3}));
    EXPECT_EQ(m.indices, (std::vector<vertex_t>{0, 0, 1}));
    EXPECT_EQ(m.values, (std::vector<float>{7.0f, 5.0f, 2.0f}));
  }
}

TEST(ExtractBlocks, RejectsBadArguments) {
  const auto in = random_block_inputs(3, true, false);
  auto short_scale = in.scale;
  short_scale.push_back(1.0f);
  EXPECT_THROW((void)extract_blocks(cpu_exec, in.a.view(), in.rows, in.cols, short_scale, false),
               option_error);
  segmented_vertices repeated;
  repeated.push_segment(std::vector<vertex_t>{1, 1});
  segmented_vertices one;
  one.push_segment(std::vector<vertex_t>{1});
  EXPECT_THROW(
      (void)extract_blocks(reference_exec, in.a.view(), one, repeated, {{1.0f, 1.0f}}, false),
      option_error);
  segmented_vertices outside;
  outside.push_segment(std::vector<vertex_t>{500});
  EXPECT_THROW((void)extract_blocks(cpu_exec, in.a.view(), outside, one, {{1.0f}}, false),
               option_error);
  EXPECT_THROW((void)extract_blocks(cpu_exec, in.a.view(), one, in.cols, in.scale, false),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels

namespace bulkgnn::kernels {
namespace {

TEST(LookupEntries, FindsEachStoredValueAndZeroElsewhere) {
  for (std::uint64_t seed = 1; seed < 9; ++seed) {
    std::mt19937_64 gen(seed);
    const bool weighted = seed % 2 == 0;
    const auto a = testing::random_csr(
        gen, {.rows = 50, .cols = 200, .mean_degree = 40, .weighted = weighted});
    segmented_vertices cols;
    std::vector<vertex_t> rows;
    for (int j = 0; j < 6; ++j) {
      rows.push_back(static_cast<vertex_t>(gen() % 50));
      std::vector<vertex_t> segment;
      for (vertex_t v = 0; v < 200; ++v)
        if (gen() % 3 == 0) segment.push_back(v);
      std::shuffle(segment.begin(), segment.end(), gen);
      cols.push_segment(segment);
    }
    const auto found = lookup_entries(cpu_exec, a.view(), rows, cols);
    EXPECT_EQ(testing::bits(found),
              testing::bits(lookup_entries(reference_exec, a.view(), rows, cols)));
    for (std::int64_t j = 0; j < cols.segments(); ++j) {
      const auto row = a.view().row(rows[j]);
      for (auto k = cols.offsets[j]; k < cols.offsets[j + 1]; ++k) {
        const auto at = std::find(row.begin(), row.end(), cols.vertices[k]);
        const float expected =
            at == row.end() ? 0.0f
                            : (weighted ? a.values[a.indptr[rows[j]] + (at - row.begin())] : 1.0f);
        EXPECT_EQ(found[k], expected);
      }
    }
  }
}

TEST(LookupEntries, RejectsARowCountOtherThanTheSegmentCount) {
  std::mt19937_64 gen(3);
  const auto a = testing::random_csr(gen, {.rows = 10, .cols = 10, .mean_degree = 3});
  segmented_vertices cols;
  cols.push_segment(std::vector<vertex_t>{1, 2});
  const std::vector<vertex_t> rows{0, 1};
  EXPECT_THROW((void)lookup_entries(cpu_exec, a.view(), rows, cols), option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
