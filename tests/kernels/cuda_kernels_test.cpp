// The CUDA back end against the cpu back end, bit for bit, on random inputs
// (label gpu). Without a visible GPU every test says why it is skipped; with
// BULKGNN_EXPECT_GPU set (the GPU machine's check script sets it), a missing
// GPU fails instead.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "cuda_fixture.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::CudaKernels;
using testing::expect_identical;

TEST_F(CudaKernels, SampleRowsDrawsWhatTheCpuDrawsInEveryMode) {
  std::mt19937_64 gen(3);
  for (int round = 0; round < 4; ++round) {
    const bool weighted = round % 2 == 0;
    const auto a = testing::random_csr(gen, {.rows = 500 + 300 * round,
                                             .cols = 700,
                                             .mean_degree = 8 + 20 * round,
                                             .weighted = weighted,
                                             .empty_rows = 0.1});
    std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
    std::vector<vertex_t> rows(2 * a.rows);
    std::vector<std::uint32_t> minibatch(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i] = row(gen);
      minibatch[i] = static_cast<std::uint32_t>(i % 5);
    }
    const row_streams host_streams{
        .seed = 9, .epoch = 1, .layer = 2, .minibatch_of_row = minibatch};
    const auto device_a = copy_to(a.view(), device());
    const auto device_rows = copy_to(std::span<const vertex_t>(rows), device());
    const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
    const row_streams device_streams{
        .seed = 9, .epoch = 1, .layer = 2, .minibatch_of_row = device_minibatch};
    for (const std::int64_t fanout : {1, 5, 25, -1})
      for (const replacement mode : {replacement::without, replacement::with})
        for (const weighting weights : {weighting::uniform, weighting::by_value}) {
          if (fanout == -1 && mode == replacement::with) continue;
          const row_sampling_options options{.fanout = fanout, .mode = mode, .weights = weights};
          SCOPED_TRACE(::testing::Message()
                       << "round " << round << " fanout " << fanout << " mode "
                       << static_cast<int>(mode) << " weights " << static_cast<int>(weights));
          const auto on_gpu =
              sample_rows(gpu(), device_a.view(), device_rows, device_streams, options);
          EXPECT_EQ(on_gpu.space(), memory_space::device);
          expect_identical(sample_rows(cpu_exec, a.view(), rows, host_streams, options),
                           copy_to_host(on_gpu));
        }
  }
}

TEST_F(CudaKernels, SampleRowsReadsAGraphInPinnedHostMemoryThroughUva) {
  std::mt19937_64 gen(4);
  const auto a = testing::random_csr(gen, {.rows = 400, .cols = 400, .mean_degree = 30});
  std::vector<vertex_t> rows(400);
  std::vector<std::uint32_t> minibatch(400, 7);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<vertex_t>(i);
  const auto pinned_a = copy_to(a.view(), pinned());
  const auto device_rows = copy_to(std::span<const vertex_t>(rows), device());
  const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
  const row_sampling_options options{.fanout = 10};
  expect_identical(
      sample_rows(cpu_exec, a.view(), rows, {.seed = 1, .minibatch_of_row = minibatch}, options),
      copy_to_host(sample_rows(gpu(), pinned_a.view(), device_rows,
                               {.seed = 1, .minibatch_of_row = device_minibatch}, options)));
}

TEST_F(CudaKernels, SampleRowsRefusesPageableHostRowsAndOutOfRangeRows) {
  std::mt19937_64 gen(5);
  const auto a = testing::random_csr(gen, {.rows = 50, .cols = 50});
  const auto device_a = copy_to(a.view(), device());
  const std::vector<vertex_t> host_rows{1, 2};
  const auto minibatch =
      copy_to(std::span<const std::uint32_t>(std::vector<std::uint32_t>{0, 0}), device());
  EXPECT_THROW((void)sample_rows(gpu(), device_a.view(), host_rows, {.minibatch_of_row = minibatch},
                                 {.fanout = 2}),
               option_error);
  const auto bad_rows = copy_to(std::span<const vertex_t>(std::vector<vertex_t>{1, 50}), device());
  EXPECT_THROW((void)sample_rows(gpu(), device_a.view(), bad_rows, {.minibatch_of_row = minibatch},
                                 {.fanout = 2}),
               option_error);
}

// LABOR-0's draw decides per entry on the GPU, per row on the host: the
// same entries, in stored order, from a device or a pinned graph, with
// rows longer and shorter than the fanout and empty ones.
TEST_F(CudaKernels, SharedVariateDrawsTakeWhatTheCpuTakes) {
  std::mt19937_64 gen(6);
  const auto a =
      testing::random_csr(gen, {.rows = 900, .cols = 600, .mean_degree = 40, .empty_rows = 0.1});
  std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
  std::vector<vertex_t> rows(1500);
  std::vector<std::uint32_t> minibatch(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = row(gen);
    minibatch[i] = static_cast<std::uint32_t>(i / 300);
  }
  const row_streams host_streams{.seed = 4, .epoch = 2, .layer = 1, .minibatch_of_row = minibatch};
  const auto device_rows = copy_to(std::span<const vertex_t>(rows), device());
  const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
  const row_streams device_streams{
      .seed = 4, .epoch = 2, .layer = 1, .minibatch_of_row = device_minibatch};
  const auto device_a = copy_to(a.view(), device());
  const auto pinned_a = copy_to(a.view(), pinned());
  for (const std::int64_t fanout : {1, 7, 40, 1000}) {
    SCOPED_TRACE(::testing::Message() << "fanout " << fanout);
    const auto expected =
        sample_rows_with_shared_variates(cpu_exec, a.view(), rows, host_streams, fanout);
    const auto from_device = sample_rows_with_shared_variates(gpu(), device_a.view(), device_rows,
                                                              device_streams, fanout);
    EXPECT_EQ(from_device.space(), memory_space::device);
    expect_identical(expected, copy_to_host(from_device));
    expect_identical(expected, copy_to_host(sample_rows_with_shared_variates(
                                   gpu(), pinned_a.view(), device_rows, device_streams, fanout)));
  }
  const std::vector<vertex_t> no_rows;
  const std::vector<std::uint32_t> no_minibatches;
  const auto device_no_rows = copy_to(std::span<const vertex_t>(no_rows), device());
  const auto device_no_minibatches =
      copy_to(std::span<const std::uint32_t>(no_minibatches), device());
  expect_identical(
      sample_rows_with_shared_variates(cpu_exec, a.view(), no_rows,
                                       {.minibatch_of_row = no_minibatches}, 3),
      copy_to_host(sample_rows_with_shared_variates(
          gpu(), device_a.view(), device_no_rows, {.minibatch_of_row = device_no_minibatches}, 3)));
  const auto bad_rows = copy_to(std::span<const vertex_t>(std::vector<vertex_t>{1, 900}), device());
  const auto two =
      copy_to(std::span<const std::uint32_t>(std::vector<std::uint32_t>{0, 0}), device());
  EXPECT_THROW((void)sample_rows_with_shared_variates(gpu(), device_a.view(), bad_rows,
                                                      {.minibatch_of_row = two}, 3),
               option_error);
}

// Frontier rows in minibatches of random sizes (some empty), as LABOR-i's
// draw takes them, and each row's minibatch.
std::pair<segmented_vertices, std::vector<std::uint32_t>> labor_segments(std::mt19937_64& gen,
                                                                         std::int64_t num_rows,
                                                                         int segments) {
  std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(num_rows - 1));
  std::uniform_int_distribution<int> size(0, 60);
  segmented_vertices rows;
  std::vector<std::uint32_t> minibatch;
  for (int m = 0; m < segments; ++m) {
    std::vector<vertex_t> segment(static_cast<std::size_t>(m == 1 ? 0 : size(gen)));
    for (auto& v : segment) v = row(gen);
    rows.push_segment(segment);
    minibatch.insert(minibatch.end(), segment.size(), static_cast<std::uint32_t>(m));
  }
  return {std::move(rows), std::move(minibatch)};
}

// LABOR-i's steps run per minibatch on the GPU, each converging on its own:
// the CPU's kept entries and weights, bit for bit, for every count of steps.
TEST_F(CudaKernels, ImportanceDrawsGiveTheCpusEntriesAndWeights) {
  std::mt19937_64 gen(8);
  for (int round = 0; round < 3; ++round) {
    const auto a = testing::random_csr(
        gen,
        {.rows = 200 + 100 * round, .cols = 300, .mean_degree = 8 + 12 * round, .empty_rows = 0.2});
    const auto [rows, minibatch] = labor_segments(gen, a.rows, 6);
    const row_streams host_streams{.seed = static_cast<std::uint32_t>(round),
                                   .epoch = 3,
                                   .layer = 1,
                                   .minibatch_of_row = minibatch};
    const auto device_rows = on_gpu(rows);
    const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
    const row_streams device_streams{.seed = static_cast<std::uint32_t>(round),
                                     .epoch = 3,
                                     .layer = 1,
                                     .minibatch_of_row = device_minibatch};
    const auto device_a = copy_to(a.view(), round == 2 ? pinned() : device());
    for (const std::int64_t fanout : {1, 4, 30})
      for (const std::int64_t iterations : {0, 1, 3, -1}) {
        SCOPED_TRACE(::testing::Message()
                     << "round " << round << " fanout " << fanout << " iterations " << iterations);
        expect_identical(
            sample_rows_with_importance(cpu_exec, a.view(), rows, host_streams, fanout, iterations),
            copy_to_host(sample_rows_with_importance(gpu(), device_a.view(), device_rows,
                                                     device_streams, fanout, iterations)));
      }
  }
}

// LABOR-i's draw with nothing to number (no rows; rows without entries) and
// with a row outside the graph.
TEST_F(CudaKernels, ImportanceDrawsHandleEmptyFrontiersAndRefuseBadRows) {
  std::mt19937_64 gen(9);
  const auto a = testing::random_csr(gen, {.rows = 50, .cols = 50, .empty_rows = 1.0});
  const auto device_a = copy_to(a.view(), device());
  for (const std::vector<vertex_t>& frontier : {std::vector<vertex_t>{}, {7, 7, 30}}) {
    segmented_vertices rows;
    rows.push_segment(frontier);
    rows.push_segment({});
    const std::vector<std::uint32_t> minibatch(frontier.size(), 0);
    const auto device_rows = on_gpu(rows);
    const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
    for (const std::int64_t iterations : {0, -1})
      expect_identical(sample_rows_with_importance(cpu_exec, a.view(), rows,
                                                   {.minibatch_of_row = minibatch}, 3, iterations),
                       copy_to_host(sample_rows_with_importance(
                           gpu(), device_a.view(), device_rows,
                           {.minibatch_of_row = device_minibatch}, 3, iterations)));
  }
  segmented_vertices bad;
  bad.push_segment(std::vector<vertex_t>{1, 50});
  const auto device_bad = on_gpu(bad);
  const auto two =
      copy_to(std::span<const std::uint32_t>(std::vector<std::uint32_t>{0, 0}), device());
  EXPECT_THROW((void)sample_rows_with_importance(gpu(), device_a.view(), device_bad,
                                                 {.minibatch_of_row = two}, 3, -1),
               option_error);
}

// A random walk's step reads rows with their self loops: the loop appended
// where a row lacks it, as the host appends it.
TEST_F(CudaKernels, WithSelfLoopsAppendsTheLoopsTheCpuAppends) {
  std::mt19937_64 gen(7);
  const auto a =
      testing::random_csr(gen, {.rows = 300, .cols = 300, .mean_degree = 12, .empty_rows = 0.1});
  std::uniform_int_distribution<vertex_t> vertex(0, 299);
  std::vector<vertex_t> row_of(800);
  std::vector<vertex_t> vertices(800);
  for (std::size_t i = 0; i < row_of.size(); ++i) {
    row_of[i] = vertex(gen);
    // Half the rows are asked for a column they may already hold.
    vertices[i] = i % 2 == 0 ? row_of[i] : vertex(gen);
  }
  const auto expected = with_self_loops(cpu_exec, a.view(), row_of, vertices);
  const auto device_row_of = copy_to(std::span<const vertex_t>(row_of), device());
  const auto device_vertices = copy_to(std::span<const vertex_t>(vertices), device());
  for (const auto& placed : {copy_to(a.view(), device()), copy_to(a.view(), pinned())})
    expect_identical(expected, copy_to_host(with_self_loops(gpu(), placed.view(), device_row_of,
                                                            device_vertices)));
  const auto device_a = copy_to(a.view(), device());
  const std::vector<vertex_t> none;
  const auto device_none = copy_to(std::span<const vertex_t>(none), device());
  expect_identical(with_self_loops(cpu_exec, a.view(), none, none),
                   copy_to_host(with_self_loops(gpu(), device_a.view(), device_none, device_none)));
  const auto bad = copy_to(std::span<const vertex_t>(std::vector<vertex_t>{0, 300}), device());
  EXPECT_THROW((void)with_self_loops(gpu(), device_a.view(), bad, bad), option_error);
}

TEST_F(CudaKernels, RelabelNumbersSourcesAsTheCpuDoes) {
  std::mt19937_64 gen(7);
  const auto a = testing::random_csr(gen, {.rows = 3000, .cols = 3000, .mean_degree = 12});
  // Segments of distinct destinations (one empty), as a bulk's frontier.
  segmented_vertices destinations;
  std::uniform_int_distribution<vertex_t> vertex(0, 2999);
  for (const int size : {50, 0, 400, 1, 900}) {
    std::vector<vertex_t> segment;
    while (static_cast<int>(segment.size()) < size) {
      const vertex_t v = vertex(gen);
      if (std::find(segment.begin(), segment.end(), v) == segment.end()) segment.push_back(v);
    }
    destinations.push_segment(segment);
  }
  const std::vector<std::uint32_t> minibatch(destinations.vertices.size(), 0);
  const auto sampled = sample_rows(cpu_exec, a.view(), destinations.vertices,
                                   {.seed = 2, .minibatch_of_row = minibatch}, {.fanout = 8});
  const auto expected = relabel_by_segment(cpu_exec, destinations, sampled.view());

  segmented_vertices there;
  there.vertices = copy_to(std::span<const vertex_t>(destinations.vertices), device());
  there.offsets = copy_to(std::span<const std::int64_t>(destinations.offsets), pinned());
  const auto sampled_there = copy_to(sampled.view(), device());
  for (const relabel_method method : {relabel_method::sort, relabel_method::hash}) {
    SCOPED_TRACE(method == relabel_method::sort ? "sort" : "hash");
    const auto got = relabel_by_segment(gpu(), there, sampled_there.view(), method);
    EXPECT_EQ(copy_to_host(got.sources.vertices), expected.sources.vertices);
    EXPECT_EQ(copy_to_host(got.sources.offsets), expected.sources.offsets);
    expect_identical(expected.blocks, copy_to_host(got.blocks));
  }
}

TEST_F(CudaKernels, GatherDenseRowsCopiesTheRowsTheCpuCopies) {
  std::mt19937_64 gen(6);
  const auto x = testing::random_dense(gen, 1000, 37);
  std::uniform_int_distribution<vertex_t> row(0, 999);
  std::vector<vertex_t> rows(3000);
  for (auto& r : rows) r = row(gen);
  testing::dense_matrix expected(3000, 37);
  gather_dense_rows(cpu_exec, x.view(), rows, expected.view());
  for (memory_resource* features : {&device(), &pinned()}) {
    const auto x_there = copy_to(std::span<const float>(x.data), *features);
    const auto rows_there = copy_to(std::span<const vertex_t>(rows), device());
    buffer<float> out(3000 * 37, device());
    gather_dense_rows(gpu(), {1000, 37, std::span<const float>(x_there), features->space()},
                      rows_there, {3000, 37, std::span<float>(out), memory_space::device});
    const auto back = copy_to_host(out);
    EXPECT_TRUE(testing::same_bits(expected.data, std::span<const float>(back)))
        << memory_space_name(features->space());
  }
}

TEST_F(CudaKernels, ScatterDenseRowsWritesTheRowsTheCpuWrites) {
  std::mt19937_64 gen(7);
  std::vector<vertex_t> rows(1000);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), gen);
  rows.resize(600);
  const auto x = testing::random_dense(gen, 600, 37);
  testing::dense_matrix expected(1000, 37);
  std::fill(expected.data.begin(), expected.data.end(), -1.0f);
  const auto untouched = expected.data;
  scatter_dense_rows(cpu_exec, x.view(), rows, 0.3f, expected.view());
  const auto x_there = copy_to(std::span<const float>(x.data), device());
  const auto rows_there = copy_to(std::span<const vertex_t>(rows), device());
  auto out = copy_to(std::span<const float>(untouched), device());
  scatter_dense_rows(gpu(), {600, 37, std::span<const float>(x_there), memory_space::device},
                     rows_there, 0.3f, {1000, 37, std::span<float>(out), memory_space::device});
  EXPECT_TRUE(testing::same_bits(expected.data, std::span<const float>(copy_to_host(out))));
}

// Segments of distinct vertices of [0, n), of the given sizes.
segmented_vertices distinct_segments(std::mt19937_64& gen, std::int64_t n,
                                     std::initializer_list<int> sizes) {
  segmented_vertices out;
  std::vector<vertex_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  for (const int size : sizes) {
    std::shuffle(all.begin(), all.end(), gen);
    out.push_segment(std::span<const vertex_t>(all).first(static_cast<std::size_t>(size)));
  }
  return out;
}

csr_view pattern(csr_view m) {
  m.values = {};
  return m;
}

// A LADIES hop's kernels, one by one on the same inputs: the layer-wise
// weights Q·(A + I) (spgemm and add must sum in the cpu's order to give the
// same bits), the lookups of 1/p, and the extracted, normalised blocks.
TEST_F(CudaKernels, LayerWiseKernelsGiveTheCpusBits) {
  std::mt19937_64 gen(11);
  for (const bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted graph" : "pattern graph");
    const auto a = testing::random_csr(
        gen, {.rows = 2000, .cols = 2000, .mean_degree = 15, .weighted = weighted});
    const auto a_gpu = copy_to(a.view(), device());
    const auto frontier = distinct_segments(gen, 2000, {300, 1, 700, 50});
    const auto frontier_gpu = on_gpu(frontier);

    const auto distinct = sorted_distinct(cpu_exec, frontier.vertices);
    const auto distinct_gpu = sorted_distinct(gpu(), frontier_gpu.vertices);
    EXPECT_EQ(copy_to_host(distinct_gpu), distinct);
    EXPECT_EQ(copy_to_host(positions_in_sorted(gpu(), frontier_gpu.vertices, distinct_gpu)),
              positions_in_sorted(cpu_exec, frontier.vertices, distinct));

    const auto q = frontier_selection(cpu_exec, frontier, distinct, a.view(), distinct, a.rows);
    const auto q_gpu =
        frontier_selection(gpu(), frontier_gpu, distinct_gpu, a_gpu.view(), distinct_gpu, a.rows);
    expect_identical(q, copy_to_host(q_gpu));

    std::vector<vertex_t> numbers(distinct.size());
    std::iota(numbers.begin(), numbers.end(), 0);
    const auto numbers_gpu = on_gpu(numbers);
    const auto cols = static_cast<std::int64_t>(numbers.size());
    expect_identical(
        rename_columns(cpu_exec, q.view(), distinct, numbers, cols),
        copy_to_host(rename_columns(gpu(), q_gpu.view(), distinct_gpu, numbers_gpu, cols)));

    for (const bool weighted_b : {false, true}) {
      const auto b = weighted_b ? a.view() : pattern(a.view());
      const auto b_gpu = weighted_b ? a_gpu.view() : pattern(a_gpu.view());
      const auto qa = spgemm(cpu_exec, q.view(), b);
      const auto qa_gpu = spgemm(gpu(), q_gpu.view(), b_gpu);
      expect_identical(qa, copy_to_host(qa_gpu));
      expect_identical(add(cpu_exec, qa.view(), q.view()),
                       copy_to_host(add(gpu(), qa_gpu.view(), q_gpu.view())));
    }

    const auto weights = add(cpu_exec, spgemm(cpu_exec, q.view(), a.view()).view(), q.view());
    const auto weights_gpu = copy_to(weights.view(), device());
    auto normalized = weights;
    auto normalized_gpu = copy_to(weights.view(), device());
    normalize_rows(cpu_exec, normalized);
    normalize_rows(gpu(), normalized_gpu);
    expect_identical(normalized, copy_to_host(normalized_gpu));

    expect_identical(
        spread_to_segment_starts(cpu_exec, weights.view(), frontier.offsets),
        copy_to_host(spread_to_segment_starts(gpu(), weights_gpu.view(), frontier_gpu.offsets)));

    const std::vector<vertex_t> weight_row{0, 1, 2, 3};
    const auto weight_row_gpu = on_gpu(weight_row);
    auto inverse_p = lookup_entries(cpu_exec, weights.view(), weight_row, frontier);
    auto inverse_p_gpu = lookup_entries(gpu(), weights_gpu.view(), weight_row_gpu, frontier_gpu);
    EXPECT_TRUE(testing::same_bits(std::span<const float>(inverse_p),
                                   std::span<const float>(copy_to_host(inverse_p_gpu))));
    invert_probabilities(cpu_exec, inverse_p);
    invert_probabilities(gpu(), inverse_p_gpu);
    EXPECT_TRUE(testing::same_bits(std::span<const float>(inverse_p),
                                   std::span<const float>(copy_to_host(inverse_p_gpu))));

    // Destinations: a sub-list of each segment's sources, as a hop has.
    segmented_vertices destinations;
    for (std::int64_t j = 0; j < frontier.segments(); ++j) {
      const auto segment = frontier.segment(j);
      destinations.push_segment(segment.first((segment.size() + 1) / 2));
    }
    const auto destinations_gpu = on_gpu(destinations);
    // Local columns back to vertex ids, as a column-split hop renumbers.
    const auto blocks = extract_blocks(cpu_exec, a.view(), destinations, frontier, inverse_p, true);
    const auto blocks_gpu = copy_to(blocks.view(), device());
    const auto row_offsets_gpu =
        copy_to(std::span<const std::int64_t>(destinations.offsets), pinned());
    expect_identical(
        columns_as_vertices(cpu_exec, blocks.view(), destinations.offsets, frontier, a.rows),
        copy_to_host(
            columns_as_vertices(gpu(), blocks_gpu.view(), row_offsets_gpu, frontier_gpu, a.rows)));
    for (const bool self_loops : {true, false})
      expect_identical(
          extract_blocks(cpu_exec, a.view(), destinations, frontier, inverse_p, self_loops),
          copy_to_host(extract_blocks(gpu(), a_gpu.view(), destinations_gpu, frontier_gpu,
                                      inverse_p_gpu, self_loops)));
  }
}

// The table in pinned host memory (read through UVA) behind a device cache:
// the rows the cpu gathers from the table alone, and the cpu's hit count.
TEST_F(CudaKernels, GatherCachedRowsReadsTheCacheAndTheTableThroughUva) {
  std::mt19937_64 gen(12);
  const auto x = testing::random_dense(gen, 2000, 45);
  std::vector<std::int32_t> slot_of(2000, -1);
  testing::dense_matrix cache(300, 45);
  for (std::int32_t slot = 0; slot < 300; ++slot) {
    const vertex_t v = slot * 5 + 3;
    slot_of[v] = slot;
    std::copy_n(x.data.begin() + v * 45, 45, cache.data.begin() + slot * 45);
  }
  std::uniform_int_distribution<vertex_t> row(0, 1999);
  std::vector<vertex_t> rows(5000);
  for (auto& r : rows) r = row(gen);
  testing::dense_matrix expected(5000, 45);
  const cached_rows on_host{x.view(), cache.view(), slot_of};
  const auto hits = gather_cached_rows(cpu_exec, on_host, rows, expected.view());

  const auto table = copy_to(std::span<const float>(x.data), pinned());
  const auto cache_there = copy_to(std::span<const float>(cache.data), device());
  const auto slots_there = copy_to(std::span<const std::int32_t>(slot_of), device());
  const auto rows_there = on_gpu(rows);
  buffer<float> out(5000 * 45, device());
  const cached_rows on_gpu_rows{
      {2000, 45, std::span<const float>(table), memory_space::pinned_host},
      {300, 45, std::span<const float>(cache_there), memory_space::device},
      slots_there};
  EXPECT_EQ(gather_cached_rows(gpu(), on_gpu_rows, rows_there,
                               {5000, 45, std::span<float>(out), memory_space::device}),
            hits);
  EXPECT_TRUE(testing::same_bits(expected.data, std::span<const float>(copy_to_host(out))));
}

TEST_F(CudaKernels, SpmmSumsAsTheCpuDoes) {
  std::mt19937_64 gen(13);
  for (const bool weighted : {false, true}) {
    const auto a = testing::random_csr(
        gen,
        {.rows = 700, .cols = 900, .mean_degree = 20, .weighted = weighted, .empty_rows = 0.1});
    const auto x = testing::random_dense(gen, 900, 70);
    testing::dense_matrix expected(700, 70);
    spmm(cpu_exec, a.view(), x.view(), expected.view());
    const auto a_there = copy_to(a.view(), device());
    const auto x_there = copy_to(std::span<const float>(x.data), device());
    buffer<float> y(700 * 70, device());
    spmm(gpu(), a_there.view(), {900, 70, std::span<const float>(x_there), memory_space::device},
         {700, 70, std::span<float>(y), memory_space::device});
    EXPECT_TRUE(testing::same_bits(expected.data, std::span<const float>(copy_to_host(y))))
        << (weighted ? "weighted" : "pattern");
  }
}

TEST_F(CudaKernels, SddmmSumsAsTheCpuDoes) {
  std::mt19937_64 gen(14);
  const auto p = testing::random_csr(
      gen, {.rows = 700, .cols = 900, .mean_degree = 20, .weighted = true, .empty_rows = 0.1});
  const auto a = testing::random_dense(gen, 700, 70);
  const auto b = testing::random_dense(gen, 900, 70);
  std::vector<float> expected(static_cast<std::size_t>(p.nnz()));
  sddmm(cpu_exec, p.view(), a.view(), b.view(), expected);
  const auto p_there = copy_to(p.view(), device());
  const auto a_there = copy_to(std::span<const float>(a.data), device());
  const auto b_there = copy_to(std::span<const float>(b.data), device());
  buffer<float> out(expected.size(), device());
  sddmm(gpu(), p_there.view(), {700, 70, std::span<const float>(a_there), memory_space::device},
        {900, 70, std::span<const float>(b_there), memory_space::device}, std::span<float>(out));
  EXPECT_TRUE(testing::same_bits(expected, std::span<const float>(copy_to_host(out))));
}

TEST_F(CudaKernels, InvertProbabilitiesRefusesAZeroProbability) {
  auto values = copy_to(std::span<const float>(std::vector<float>{0.5f, 0.0f}), device());
  EXPECT_THROW(invert_probabilities(gpu(), values), option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
