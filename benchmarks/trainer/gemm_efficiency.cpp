// GEMM efficiency of the train step: runs forward+backward of GraphSAGE on
// real minibatches from the loader, logs every GEMM call with its time, then
// replays each call's shape alone (warm, best of 3) through the same wrapper.
// The ratio says how much of OpenBLAS's own speed on exactly those shapes the
// train step gets; the square 4096³ SGEMM gives the machine's BLAS peak.
//
//   gemm_efficiency DATA [--fanouts 15,10,5] [--hidden 256] [--batch-size 1024]
//                   [--minibatches 8] [--threads 2]

#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/parse.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/trainer/gemm.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <cblas.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

namespace {

using namespace bulkgnn;

trainer::matrix random_matrix(std::mt19937& gen, std::int64_t rows, std::int64_t cols) {
  trainer::matrix m(rows, cols);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : m.data()) v = u(gen);
  return m;
}

// Seconds of the best of three runs of one call's shape through gemm().
double replay(const trainer::gemm_call& call, std::mt19937& gen) {
  const auto a =
      call.transpose_a ? random_matrix(gen, call.k, call.m) : random_matrix(gen, call.m, call.k);
  const auto b =
      call.transpose_b ? random_matrix(gen, call.n, call.k) : random_matrix(gen, call.k, call.n);
  trainer::matrix c(call.m, call.n);
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const stopwatch watch;
    trainer::gemm(call.transpose_a, call.transpose_b, 1.0f, a.view(), b.view(), 0.0f, c.view());
    best = std::min(best, watch.seconds());
  }
  return best;
}

double square_peak_gflops(std::int64_t n, bool through_wrapper, int threads) {
  std::mt19937 gen(1);
  const auto a = random_matrix(gen, n, n);
  const auto b = random_matrix(gen, n, n);
  trainer::matrix c(n, n);
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    // gemm() keeps OpenBLAS at one thread per tile; the direct call gets them all.
    if (!through_wrapper) openblas_set_num_threads(threads);
    const stopwatch watch;
    if (through_wrapper)
      trainer::gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n),
                  static_cast<int>(n), static_cast<int>(n), 1.0f, a.view().data.data(),
                  static_cast<int>(n), b.view().data.data(), static_cast<int>(n), 0.0f,
                  c.view().data.data(), static_cast<int>(n));
    best = std::min(best, watch.seconds());
  }
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best /
         1e9;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("GEMM efficiency of the bulkgnn train step against OpenBLAS alone");
  std::string data;
  std::string fanouts = "15,10,5";
  std::int64_t hidden = 256;
  std::int64_t batch_size = 1024;
  std::int64_t minibatches = 8;
  int threads = 2;
  app.add_option("DATA", data, "native or OGB raw dataset directory")->required();
  app.add_option("--fanouts", fanouts);
  app.add_option("--hidden", hidden);
  app.add_option("--batch-size", batch_size);
  app.add_option("--minibatches", minibatches);
  app.add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);

  const thread_limit limit(threads);
  trainer::set_gemm_threads(threads);
  const auto ds = data::dataset::open(data);
  const auto fanout_list = parse_int_list(fanouts, "--fanouts");
  loader::minibatch_loader loader({ds.graph(), ds.features(), ds.labels()},
                                  {.fanouts = fanout_list, .seed = 0},
                                  {.batch_size = batch_size, .max_minibatches = minibatches + 1});
  trainer::gnn_model model({.in_features = ds.features().cols,
                            .hidden = hidden,
                            .num_classes = std::max(ds.num_classes(), 2),
                            .layers = static_cast<int>(fanout_list.size())},
                           0);
  std::vector<trainer::gemm_call> calls;
  auto stream = loader.epoch(ds.splits().front().train, 0);
  bool warmed_up = false;
  while (auto mb = stream.next()) {
    std::vector<trainer::aggregation_block> blocks;
    for (const auto& b : mb->batch.blocks)
      blocks.push_back(trainer::make_aggregation_block({}, b, trainer::layer_kind::sage, true));
    model.set_gemm_log(warmed_up ? &calls : nullptr);
    const auto logits = model.forward(blocks, mb->input_features(), trainer::dropout_key{0, 0, 0});
    trainer::matrix grad(logits.rows, logits.cols);
    std::fill(grad.data().begin(), grad.data().end(), 1e-3f);
    model.backward(grad.view());
    warmed_up = true;
  }

  // Calls grouped by everything but M (which varies with the minibatch).
  using key = std::tuple<bool, bool, std::int64_t, std::int64_t, bool>;
  struct totals {
    double flops = 0, in_training = 0, alone = 0;
    std::int64_t calls = 0, m_min = 0, m_max = 0;
  };
  std::map<key, totals> groups;
  std::mt19937 gen(7);
  totals all;
  for (const auto& c : calls) {
    const double flops =
        2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    const double alone = replay(c, gen);
    // Weight gradients have K = rows of the minibatch; group them by M × N.
    const bool k_varies = c.transpose_a;
    auto& g = groups[{c.transpose_a, c.transpose_b, c.n, k_varies ? c.m : c.k, k_varies}];
    g.m_min = g.calls == 0 ? (k_varies ? c.k : c.m) : std::min(g.m_min, k_varies ? c.k : c.m);
    g.m_max = std::max(g.m_max, k_varies ? c.k : c.m);
    for (auto* t : {&g, &all}) {
      t->flops += flops;
      t->in_training += c.seconds;
      t->alone += alone;
      ++t->calls;
    }
  }

  fmt::print(
      "| op | shape (varying dim range) | calls | GFLOP/s in train step | GFLOP/s alone "
      "| ratio |\n|---|---|---|---|---|---|\n");
  for (const auto& [k, g] : groups) {
    const auto [ta, tb, n, fixed, k_varies] = k;
    const auto shape = k_varies ? fmt::format("{}x{} · K∈[{},{}]", fixed, n, g.m_min, g.m_max)
                                : fmt::format("M∈[{},{}] · {}x{}", g.m_min, g.m_max, fixed, n);
    fmt::print("| {}{} | {} | {} | {:.1f} | {:.1f} | {:.2f} |\n", ta ? "Aᵀ" : "A", tb ? "Bᵀ" : "B",
               shape, g.calls, g.flops / g.in_training / 1e9, g.flops / g.alone / 1e9,
               g.alone / g.in_training);
  }
  fmt::print("| all | {} minibatches | {} | {:.1f} | {:.1f} | {:.2f} |\n", minibatches, all.calls,
             all.flops / all.in_training / 1e9, all.flops / all.alone / 1e9,
             all.alone / all.in_training);
  fmt::print(
      "\nOpenBLAS peak, square 4096³ SGEMM on {} threads: {:.1f} GFLOP/s direct, {:.1f} "
      "GFLOP/s through gemm() (tiles of C, one OpenBLAS thread each)\n",
      threads, square_peak_gflops(4096, false, threads), square_peak_gflops(4096, true, threads));
  return 0;
}
