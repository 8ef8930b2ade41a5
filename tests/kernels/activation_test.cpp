#include "bulkgnn/kernels/activation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/rng.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::dense_matrix;
using testing::reference_exec;
using testing::same_bits;

TEST(ReluDropout, WithoutKeyIsRelu) {
  dense_matrix x(2, 3);
  std::vector<float> values{-1.0f, 0.0f, 2.0f, 3.0f, -0.5f, 0.25f};
  std::copy(values.begin(), values.end(), x.data.begin());
  relu_dropout(cpu_exec, x.view(), 0.5f, std::nullopt, 0);
  EXPECT_EQ(x.data, (std::vector<float>{0.0f, 0.0f, 2.0f, 3.0f, 0.0f, 0.25f}));
}

TEST(ReluDropout, DropsAboutPAndScalesTheRest) {
  dense_matrix x(400, 250);
  std::fill(x.data.begin(), x.data.end(), 1.0f);
  relu_dropout(cpu_exec, x.view(), 0.3f, dropout_key{1, 2, 3}, 0);
  // Kept entries are scaled by 1/(1 − p), p resolved to 1/65536.
  const float scale = *std::max_element(x.data.begin(), x.data.end());
  EXPECT_NEAR(scale, 1.0f / 0.7f, 1e-4f);
  const auto kept = std::count(x.data.begin(), x.data.end(), scale);
  const auto dropped = std::count(x.data.begin(), x.data.end(), 0.0f);
  EXPECT_EQ(kept + dropped, 100000);
  // 100,000 Bernoulli(0.3) draws: sd ≈ 145.
  EXPECT_NEAR(static_cast<double>(dropped), 30000.0, 750.0);
}

TEST(ReluDropout, MasksDependOnKeyAndLayerButNotOnThreads) {
  std::mt19937_64 gen(5);
  const dense_matrix input = testing::random_dense(gen, 600, 200);
  const auto run = [&](dropout_key key, int layer, int threads) {
    const thread_limit limit(threads);
    dense_matrix x = input;
    relu_dropout(cpu_exec, x.view(), 0.5f, key, layer);
    return x.data;
  };
  const auto reference = run({7, 1, 2}, 0, 1);
  EXPECT_EQ(run({7, 1, 2}, 0, 2), reference);
  EXPECT_NE(run({7, 1, 3}, 0, 2), reference);
  EXPECT_NE(run({7, 1, 2}, 1, 2), reference);
  EXPECT_NE(run({8, 1, 2}, 0, 2), reference);
}

// The contract the vectorised mask path must keep, written out with the
// scalar stream: entry j of row r keeps its value when the 16-bit half j % 2
// of word j / 2 of stream {seed, epoch, minibatch, dropout_stream_base +
// layer, row id} is at least p·2^16, where the row id is r or, when the key
// carries vertex ids, row_ids[r].
TEST(ReluDropout, MasksAreThePhiloxStreamWordsOfEachRow) {
  std::mt19937_64 gen(8);
  std::vector<vertex_t> vertex_ids(37);
  for (std::size_t r = 0; r < vertex_ids.size(); ++r)
    vertex_ids[r] = static_cast<vertex_t>(1000 + 7 * r);
  for (const bool keyed_by_vertex : {false, true})
    for (const std::int64_t cols : {1, 7, 8, 127, 128, 129, 255, 256, 300, 513}) {
      for (const float p : {0.5f, 0.3f}) {
        const dense_matrix input = testing::random_dense(gen, 37, cols);
        dense_matrix x = input;
        dropout_key key{11, 3, 9};
        if (keyed_by_vertex) key.row_ids = vertex_ids;
        relu_dropout(cpu_exec, x.view(), p, key, 1);
        const auto bits_threshold =
            static_cast<std::uint32_t>(std::lround(std::ldexp(static_cast<double>(p), 16)));
        const auto scale =
            static_cast<float>(1.0 / (1.0 - std::ldexp(static_cast<double>(bits_threshold), -16)));
        for (std::int64_t r = 0; r < input.rows; ++r) {
          const auto row_id = static_cast<std::uint32_t>(keyed_by_vertex ? vertex_ids[r] : r);
          philox_stream stream(rng_key{11, 3, 9, dropout_stream_base + 1, row_id});
          std::uint32_t word = 0;
          for (std::int64_t j = 0; j < cols; ++j) {
            if (j % 2 == 0) word = stream.next_u32();
            const std::uint32_t bits = (word >> (16 * (j % 2))) & 0xFFFFu;
            const float expected = std::max(input.view().row(r)[j], 0.0f) *
                                   (scale * static_cast<float>(bits >= bits_threshold));
            ASSERT_EQ(x.view().row(r)[j], expected) << "cols " << cols << " row " << r << " entry "
                                                    << j << " keyed by vertex " << keyed_by_vertex;
          }
        }
      }
    }
}

// Many shapes, both key kinds, thread counts 1 and 2, inputs with ±0, NaN
// and infinities: forward and backward on cpu equal the reference bit for bit.
TEST(ReluDropout, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(12);
  std::vector<vertex_t> vertex_ids(700);
  for (std::size_t r = 0; r < vertex_ids.size(); ++r)
    vertex_ids[r] = static_cast<vertex_t>(50 + 3 * r);
  for (const int threads : {1, 2, 3, 5}) {
    const thread_limit limit(threads);
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 4},
                                     {1, 1},
                                     {3, 129},
                                     {37, 300},
                                     {700, 256},
                                     {650, 513}})
      for (const bool keyed_by_vertex : {false, true})
        for (const float p : {0.0f, 0.3f, 0.5f}) {
          dense_matrix input = testing::random_dense(gen, rows, cols);
          const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                                    std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity()};
          for (std::size_t i = 0; i < std::min<std::size_t>(5, input.data.size()); ++i)
            input.data[i * 7 % input.data.size()] = specials[i];
          dropout_key key{4, 5, 6};
          if (keyed_by_vertex) key.row_ids = vertex_ids;
          dense_matrix cpu = input;
          dense_matrix reference = input;
          relu_dropout(cpu_exec, cpu.view(), p, key, 2);
          relu_dropout(reference_exec, reference.view(), p, key, 2);
          ASSERT_TRUE(same_bits(cpu.data, reference.data))
              << rows << "x" << cols << " p " << p << " keyed by vertex " << keyed_by_vertex;
          dense_matrix grad_cpu = testing::random_dense(gen, rows, cols);
          dense_matrix grad_reference = grad_cpu;
          relu_dropout_backward(cpu_exec, cpu.view(), p, true, grad_cpu.view());
          relu_dropout_backward(reference_exec, reference.view(), p, true, grad_reference.view());
          ASSERT_TRUE(same_bits(grad_cpu.data, grad_reference.data)) << rows << "x" << cols;
        }
  }
}

TEST(ReluDropout, RejectsPOutsideTheRangeAndTooFewRowIdsNamingThem) {
  dense_matrix x(3, 2);
  EXPECT_THROW(relu_dropout(cpu_exec, x.view(), 1.0f, dropout_key{1, 2, 3}, 0), option_error);
  EXPECT_THROW(relu_dropout(cpu_exec, x.view(), -0.1f, std::nullopt, 0), option_error);
  const std::vector<vertex_t> ids{1, 2};
  try {
    relu_dropout(cpu_exec, x.view(), 0.5f, dropout_key{1, 2, 3, ids}, 0);
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("relu_dropout: key.row_ids"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
