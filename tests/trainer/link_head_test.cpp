#include "bulkgnn/trainer/link_head.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace bulkgnn::trainer {
namespace {

constexpr std::int64_t width = 8;
constexpr std::int64_t rows = 12;

std::vector<float> random_values(std::size_t n, std::uint32_t stream) {
  philox_stream rng(rng_key{42, stream, 0, 0, 0});
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(2.0 * rng.uniform_open01() - 1.0);
  return v;
}

// Pairs with a repeated pair and a loop (a row paired with itself).
const std::vector<vertex_t> sources{0, 3, 3, 7, 11, 5, 2};
const std::vector<vertex_t> targets{1, 4, 4, 7, 0, 9, 2};

struct reference_result {
  std::vector<double> scores;
  std::vector<double> grad_z;       // rows × width
  std::vector<double> grad_params;  // the head's layout
};

// The head in double, written from its definition: dot ⟨z_s, z_t⟩; mlp
// ReLU((z_s ⊙ z_t)·W1 + b1)·W2 + b2; gradients of Σ_i w_i·score_i.
reference_result reference(link_head_kind kind, const std::vector<float>& z,
                           const std::vector<float>& p, const std::vector<float>& w) {
  const auto h = static_cast<std::size_t>(width);
  reference_result r;
  r.grad_z.assign(static_cast<std::size_t>(rows) * h, 0.0);
  r.grad_params.assign(p.size(), 0.0);
  const std::size_t b1 = h * h;
  const std::size_t w2 = b1 + h;
  const std::size_t b2 = w2 + h;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto s = static_cast<std::size_t>(sources[i]) * h;
    const auto t = static_cast<std::size_t>(targets[i]) * h;
    std::vector<double> x(h);
    for (std::size_t j = 0; j < h; ++j) x[j] = double(z[s + j]) * double(z[t + j]);
    std::vector<double> grad_x(h, 0.0);
    if (kind == link_head_kind::dot) {
      double score = 0;
      for (std::size_t j = 0; j < h; ++j) score += x[j];
      r.scores.push_back(score);
      for (std::size_t j = 0; j < h; ++j) grad_x[j] = w[i];
    } else {
      std::vector<double> hidden(h);
      for (std::size_t c = 0; c < h; ++c) {
        double v = p[b1 + c];
        for (std::size_t j = 0; j < h; ++j) v += x[j] * p[j * h + c];
        hidden[c] = v > 0 ? v : 0;
      }
      double score = p[b2];
      for (std::size_t c = 0; c < h; ++c) score += hidden[c] * p[w2 + c];
      r.scores.push_back(score);
      r.grad_params[b2] += w[i];
      for (std::size_t c = 0; c < h; ++c) {
        r.grad_params[w2 + c] += hidden[c] * w[i];
        const double grad_hidden = hidden[c] > 0 ? w[i] * p[w2 + c] : 0.0;
        r.grad_params[b1 + c] += grad_hidden;
        for (std::size_t j = 0; j < h; ++j) {
          r.grad_params[j * h + c] += x[j] * grad_hidden;
          grad_x[j] += grad_hidden * p[j * h + c];
        }
      }
    }
    for (std::size_t j = 0; j < h; ++j) {
      r.grad_z[s + j] += grad_x[j] * z[t + j];
      r.grad_z[t + j] += grad_x[j] * z[s + j];
    }
  }
  return r;
}

void expect_close(std::span<const float> got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i]))) << what << " " << i;
}

TEST(link_head, scores_and_gradients_match_the_definition_in_double) {
  const auto z = random_values(static_cast<std::size_t>(rows * width), 1);
  const auto w = random_values(sources.size(), 2);
  for (const auto kind : {link_head_kind::dot, link_head_kind::mlp}) {
    link_head head(kind, width, 7);
    const auto p = std::vector<float>(head.parameters().begin(), head.parameters().end());
    EXPECT_EQ(p.size(), kind == link_head_kind::dot
                            ? 0u
                            : static_cast<std::size_t>(width * width + 2 * width + 1));
    const auto want = reference(kind, z, p, w);
    const auto scores = head.forward({rows, width, z, memory_space::host}, {sources, targets});
    expect_close(scores, want.scores, "scores");
    const auto grad_z = head.backward(w);
    EXPECT_EQ(grad_z.rows, rows);
    expect_close(grad_z.data, want.grad_z, "dLoss/dz");
    expect_close(head.gradients(), want.grad_params, "dLoss/dparameters");
  }
}

TEST(link_head, gradients_have_the_same_bits_for_any_thread_count) {
  // Enough pairs that the cpu kernels split the work between threads.
  std::vector<vertex_t> many_sources;
  std::vector<vertex_t> many_targets;
  philox_stream rng(rng_key{1, 2, 3, 4, 5});
  const std::int64_t nodes = 300;
  for (int i = 0; i < 20000; ++i) {
    many_sources.push_back(static_cast<vertex_t>(rng.next_u32() % nodes));
    many_targets.push_back(static_cast<vertex_t>(rng.next_u32() % nodes));
  }
  const std::int64_t h = 64;
  const auto z = random_values(static_cast<std::size_t>(nodes * h), 3);
  const auto w = random_values(many_sources.size(), 4);
  const auto run = [&](int threads) {
    const thread_limit limit(threads);
    link_head head(link_head_kind::mlp, h, 9);
    std::ignore = head.forward({nodes, h, z, memory_space::host}, {many_sources, many_targets});
    const auto grad_z = head.backward(w);
    std::vector<float> all(grad_z.data.begin(), grad_z.data.end());
    all.insert(all.end(), head.gradients().begin(), head.gradients().end());
    return all;
  };
  const auto one = run(1);
  const auto two = run(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
}

TEST(link_head, refuses_what_it_cannot_score) {
  EXPECT_THROW(link_head(link_head_kind::dot, 0, 1), error);
  EXPECT_THROW(std::ignore = parse_link_head("bilinear", "--link-head"), option_error);
  link_head head(link_head_kind::dot, width, 1);
  const auto z = random_values(static_cast<std::size_t>(rows * width), 1);
  const std::vector<vertex_t> out_of_range{static_cast<vertex_t>(rows)};
  const std::vector<vertex_t> zero{0};
  EXPECT_THROW(
      std::ignore = head.forward({rows, width, z, memory_space::host}, {out_of_range, zero}),
      error);
  EXPECT_THROW(
      std::ignore = head.forward({rows / 2, 2 * width, z, memory_space::host}, {zero, zero}),
      error);
}

}  // namespace
}  // namespace bulkgnn::trainer
