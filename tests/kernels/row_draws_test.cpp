// The per-row draw rules that CUDA threads run (rules/row_draws.hpp), run on
// the host: every row's positions equal the reference back end's sample.
#include "bulkgnn/kernels/rules/row_draws.hpp"

#include "bulkgnn/kernels/sample_rows.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace bulkgnn::kernels {
namespace {

using testing::reference_exec;

// Row r holds the columns 0 .. degree(r) - 1, so a sampled column is the
// position it was drawn at.
csr_matrix rows_of_positions(std::mt19937_64& gen, std::int64_t rows, int max_degree) {
  csr_matrix a;
  a.rows = rows;
  a.cols = max_degree;
  std::uniform_int_distribution<int> degree(0, max_degree);
  std::uniform_real_distribution<float> weight(0.05f, 3.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    const int d = degree(gen);
    for (int c = 0; c < d; ++c) {
      a.indices.push_back(c);
      a.values.push_back(weight(gen));
    }
    a.indptr.push_back(static_cast<edge_t>(a.indices.size()));
  }
  return a;
}

// What the rules draw for row `row` of `a` with `fanout`, as sample_rows
// lays a row out (rows it takes whole are every position).
std::vector<std::uint32_t> rule_positions(csr_view a, vertex_t row, const rng_key& key,
                                          std::int64_t fanout, replacement mode, bool weighted) {
  const auto degree = static_cast<std::uint32_t>(a.degree(row));
  const bool whole = degree == 0 || (mode == replacement::without && degree <= fanout);
  std::vector<std::uint32_t> out(whole ? degree : static_cast<std::size_t>(fanout));
  if (whole) {
    for (std::uint32_t e = 0; e < degree; ++e) out[e] = e;
    return out;
  }
  const auto s = static_cast<std::uint32_t>(fanout);
  const float* weights = a.row_values(row).data();
  std::vector<double> scratch(s);
  philox_stream rng(key);
  if (mode == replacement::with && weighted)
    rules::weighted_positions(rng, weights, degree, s, scratch.data(), out.data());
  else if (mode == replacement::with)
    rules::uniform_positions(rng, degree, s, out.data());
  else if (weighted)
    rules::smallest_key_positions(rng, weights, degree, s, scratch.data(), out.data());
  else
    rules::floyd_positions(rng, degree, s, out.data());
  return out;
}

TEST(RowDrawRules, DrawTheReferencePositionsInEveryMode) {
  std::mt19937_64 gen(21);
  const auto a = rows_of_positions(gen, 300, 90);
  std::vector<vertex_t> rows(a.rows);
  std::vector<std::uint32_t> minibatch(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    rows[r] = static_cast<vertex_t>(r);
    minibatch[r] = static_cast<std::uint32_t>(r % 7);
  }
  const row_streams streams{.seed = 5, .epoch = 2, .layer = 1, .minibatch_of_row = minibatch};
  for (const std::int64_t fanout : {1, 3, 10, 40, 89})
    for (const replacement mode : {replacement::without, replacement::with})
      for (const bool weighted : {false, true}) {
        const auto expected =
            sample_rows(reference_exec, a.view(), rows, streams,
                        {.fanout = fanout,
                         .mode = mode,
                         .weights = weighted ? weighting::by_value : weighting::uniform});
        for (std::int64_t i = 0; i < a.rows; ++i) {
          const auto got =
              rule_positions(a.view(), rows[i], streams.key(i, rows), fanout, mode, weighted);
          const std::vector<std::uint32_t> want(expected.indices.begin() + expected.indptr[i],
                                                expected.indices.begin() + expected.indptr[i + 1]);
          ASSERT_EQ(got, want) << "row " << i << " fanout " << fanout << " mode "
                               << static_cast<int>(mode) << " weighted " << weighted;
        }
      }
}

}  // namespace
}  // namespace bulkgnn::kernels
