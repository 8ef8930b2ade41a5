// GEMM efficiency of the train step: runs forward+backward of GraphSAGE on
// real minibatches from the loader, logs every GEMM call with its time, then
// replays each call's shape alone (warm, best of 3) side by side through
// bulkgnn's own GEMM (kernels::gemm on the cpu executor) and through the
// yardstick, OpenBLAS in tiles (C cut into tiles fixed by its shape, one
// single-threaded cblas_sgemm per tile, tiles shared by oneTBB threads: the
// trainer's GEMM before it had its own). "own/BLAS" above 1 means bulkgnn is
// faster. The square 4096³ SGEMM gives the machine's peak for each.
//
//   gemm_efficiency DATA [--fanouts 15,10,5] [--hidden 256] [--batch-size 1024]
//                   [--minibatches 8] [--threads 2]

#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/parse.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <cblas.h>
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

namespace {

using namespace bulkgnn;
using kernels::gemm_op;

trainer::matrix random_matrix(std::mt19937& gen, std::int64_t rows, std::int64_t cols) {
  trainer::matrix m(rows, cols);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : m.data()) v = u(gen);
  return m;
}

// The yardstick: tiles of C that depend on its shape alone, each one
// single-threaded OpenBLAS call over all of K.
struct blas_tiling {
  std::int64_t tile_rows, tile_cols, row_tiles, col_tiles;
};

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

blas_tiling plan_blas_tiles(std::int64_t m, std::int64_t n) {
  constexpr std::int64_t target_tiles = 32, min_tile_rows = 128, max_tile_cols = 256,
                         min_tile_cols = 128, min_tiles = 8, granule = 16;
  blas_tiling t{};
  t.tile_rows =
      std::min(m, std::max(min_tile_rows, ceil_div(ceil_div(m, target_tiles), granule) * granule));
  t.row_tiles = ceil_div(m, t.tile_rows);
  t.tile_cols = std::min(n, max_tile_cols);
  if (t.row_tiles * ceil_div(n, t.tile_cols) < min_tiles && n > min_tile_cols) {
    const std::int64_t wanted = ceil_div(min_tiles, t.row_tiles);
    t.tile_cols =
        std::min(n, std::max(min_tile_cols, ceil_div(ceil_div(n, wanted), granule) * granule));
  }
  t.col_tiles = ceil_div(n, t.tile_cols);
  return t;
}

void openblas_tiles(gemm_op op_a, gemm_op op_b, dense_view<const float> a,
                    dense_view<const float> b, dense_view<float> c) {
  const bool ta = op_a == gemm_op::transposed;
  const bool tb = op_b == gemm_op::transposed;
  const std::int64_t k = ta ? a.rows : a.cols;
  const auto t = plan_blas_tiles(c.rows, c.cols);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, t.row_tiles * t.col_tiles, 1), [&](const auto& r) {
        for (std::int64_t tile = r.begin(); tile != r.end(); ++tile) {
          const std::int64_t i0 = tile / t.col_tiles * t.tile_rows;
          const std::int64_t j0 = tile % t.col_tiles * t.tile_cols;
          const std::int64_t rows = std::min(t.tile_rows, c.rows - i0);
          const std::int64_t cols = std::min(t.tile_cols, c.cols - j0);
          cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                      static_cast<blasint>(rows), static_cast<blasint>(cols),
                      static_cast<blasint>(k), 1.0f, a.data.data() + (ta ? i0 : i0 * a.cols),
                      static_cast<blasint>(std::max<std::int64_t>(a.cols, 1)),
                      b.data.data() + (tb ? j0 * b.cols : j0),
                      static_cast<blasint>(std::max<std::int64_t>(b.cols, 1)), 0.0f,
                      c.data.data() + i0 * c.cols + j0,
                      static_cast<blasint>(std::max<std::int64_t>(c.cols, 1)));
        }
      });
}

struct replay_times {
  double own = 0;
  double blas = 0;
};

template <class Run>
double best_of_three(Run&& run) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const stopwatch watch;
    run();
    best = std::min(best, watch.seconds());
  }
  return best;
}

// Seconds of the best of three runs of one call's shape through each GEMM.
replay_times replay(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::mt19937& gen) {
  const auto a = op_a == gemm_op::transposed ? random_matrix(gen, k, m) : random_matrix(gen, m, k);
  const auto b = op_b == gemm_op::transposed ? random_matrix(gen, n, k) : random_matrix(gen, k, n);
  trainer::matrix c(m, n);
  const executor cpu{backend::cpu};
  return {.own = best_of_three(
              [&] { kernels::gemm(cpu, op_a, op_b, 1.0f, a.view(), b.view(), 0.0f, c.view()); }),
          .blas = best_of_three([&] { openblas_tiles(op_a, op_b, a.view(), b.view(), c.view()); })};
}

struct totals {
  double flops = 0, in_training = 0, own = 0, blas = 0;
  std::int64_t calls = 0, m_min = 0, m_max = 0;
};

void print_row(std::string_view op, std::string_view shape, const totals& t) {
  fmt::print("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.2f} |\n", op, shape, t.calls,
             t.flops / t.in_training / 1e9, t.flops / t.own / 1e9, t.flops / t.blas / 1e9,
             t.blas / t.own);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("GEMM efficiency of the bulkgnn train step, own GEMM against OpenBLAS tiles");
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
  openblas_set_num_threads(1);
  const auto ds = data::dataset::open(data);
  const auto fanout_list = parse_int_list(fanouts, "--fanouts");
  sampler::bulk_sampler sampler(ds.graph(), {.fanouts = fanout_list, .seed = 0});
  loader::minibatch_loader loader({ds.graph(), ds.features(), ds.labels()}, sampler,
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
    const auto logits = model.forward(blocks, mb->input_features(), kernels::dropout_key{0, 0, 0});
    trainer::matrix grad(logits.rows, logits.cols);
    std::fill(grad.data().begin(), grad.data().end(), 1e-3f);
    model.backward(grad.view());
    warmed_up = true;
  }

  // Calls grouped by everything but M (which varies with the minibatch).
  using key = std::tuple<gemm_op, gemm_op, std::int64_t, std::int64_t, bool>;
  std::map<key, totals> groups;
  std::mt19937 gen(7);
  totals all;
  for (const auto& c : calls) {
    const double flops =
        2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    const auto alone = replay(c.op_a, c.op_b, c.m, c.n, c.k, gen);
    // Weight gradients have K = rows of the minibatch; group them by M × N.
    const bool k_varies = c.op_a == gemm_op::transposed;
    auto& g = groups[{c.op_a, c.op_b, c.n, k_varies ? c.m : c.k, k_varies}];
    g.m_min = g.calls == 0 ? (k_varies ? c.k : c.m) : std::min(g.m_min, k_varies ? c.k : c.m);
    g.m_max = std::max(g.m_max, k_varies ? c.k : c.m);
    for (auto* t : {&g, &all}) {
      t->flops += flops;
      t->in_training += c.seconds;
      t->own += alone.own;
      t->blas += alone.blas;
      ++t->calls;
    }
  }

  fmt::print("own GEMM microkernel: {}, {} threads\n\n", kernels::cpu_gemm_kernel_name(), threads);
  fmt::print(
      "| op | shape (varying dim range) | calls | GFLOP/s in train step | own alone | OpenBLAS "
      "tiles alone | own/BLAS |\n|---|---|---|---|---|---|---|\n");
  for (const auto& [k, g] : groups) {
    const auto [op_a, op_b, n, fixed, k_varies] = k;
    const auto shape = k_varies ? fmt::format("{}x{} · K∈[{},{}]", fixed, n, g.m_min, g.m_max)
                                : fmt::format("M∈[{},{}] · {}x{}", g.m_min, g.m_max, fixed, n);
    print_row(fmt::format("{}{}", op_a == gemm_op::transposed ? "Aᵀ" : "A",
                          op_b == gemm_op::transposed ? "Bᵀ" : "B"),
              shape, g);
  }
  print_row("all", fmt::format("{} minibatches", minibatches), all);

  constexpr std::int64_t square = 4096;
  const auto peak = replay(gemm_op::plain, gemm_op::plain, square, square, square, gen);
  const double flops = 2.0 * square * square * static_cast<double>(square);
  fmt::print(
      "\nSquare {}³ SGEMM on {} threads: own {:.1f} GFLOP/s, OpenBLAS tiles {:.1f} GFLOP/s\n",
      square, threads, flops / peak.own / 1e9, flops / peak.blas / 1e9);
  return 0;
}
