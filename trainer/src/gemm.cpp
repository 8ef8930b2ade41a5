#include "bulkgnn/trainer/gemm.hpp"

#include "bulkgnn/core/error.hpp"

#include <cblas.h>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>

namespace bulkgnn::trainer {

namespace {

struct op_shape {
  std::int64_t rows;
  std::int64_t cols;
};

op_shape shape_of(dense_view<const float> m, bool transposed) {
  return transposed ? op_shape{m.cols, m.rows} : op_shape{m.rows, m.cols};
}

void check_storage(std::string_view function, std::int64_t rows, std::int64_t cols,
                   std::size_t size, char name) {
  BULKGNN_EXPECTS(rows >= 0 && cols >= 0 && static_cast<std::size_t>(rows * cols) <= size,
                  "{}: {} is {}x{} but holds {} floats", function, name, rows, cols, size);
}

// Checks the operands and returns K.
std::int64_t check_shapes(std::string_view function, bool transpose_a, bool transpose_b,
                          dense_view<const float> a, dense_view<const float> b,
                          dense_view<float> c) {
  check_storage(function, a.rows, a.cols, a.data.size(), 'A');
  check_storage(function, b.rows, b.cols, b.data.size(), 'B');
  check_storage(function, c.rows, c.cols, c.data.size(), 'C');
  const auto op_a = shape_of(a, transpose_a);
  const auto op_b = shape_of(b, transpose_b);
  BULKGNN_EXPECTS(op_a.cols == op_b.rows && c.rows == op_a.rows && c.cols == op_b.cols,
                  "{}: op(A) is {}x{}, op(B) is {}x{}, C is {}x{}", function, op_a.rows, op_a.cols,
                  op_b.rows, op_b.cols, c.rows, c.cols);
  return op_a.cols;
}

// C is cut into tiles that depend on its shape alone, never on the thread
// count, and each tile is one single-threaded OpenBLAS call over the whole of
// K. A thread runs whole tiles, so the thread count only decides which thread
// computes a tile, never how: every element comes out of the same call, bit
// for bit, with 1 thread or 64, whatever OpenBLAS's blocking on this core.
struct tiling {
  std::int64_t tile_rows;
  std::int64_t tile_cols;
  std::int64_t row_tiles;
  std::int64_t col_tiles;

  [[nodiscard]] std::int64_t count() const { return row_tiles * col_tiles; }
};

// Enough tiles to keep many cores busy, none so small that OpenBLAS's packing
// of its B panel outweighs the tile's product.
constexpr std::int64_t target_tiles = 32;
constexpr std::int64_t min_tile_rows = 128;
constexpr std::int64_t max_tile_cols = 256;
constexpr std::int64_t min_tile_cols = 128;
// A C with few row tiles (the weight gradients: 256x256 over a long K) is cut
// into columns too, so that it still spreads over this many threads.
constexpr std::int64_t min_tiles = 8;
constexpr std::int64_t tile_granule = 16;

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }
std::int64_t round_up(std::int64_t x, std::int64_t to) { return ceil_div(x, to) * to; }

tiling plan_tiles(std::int64_t m, std::int64_t n) {
  tiling t{};
  t.tile_rows =
      std::min(m, std::max(min_tile_rows, round_up(ceil_div(m, target_tiles), tile_granule)));
  t.row_tiles = ceil_div(m, t.tile_rows);
  t.tile_cols = std::min(n, max_tile_cols);
  if (t.row_tiles * ceil_div(n, t.tile_cols) < min_tiles && n > min_tile_cols) {
    const std::int64_t wanted = ceil_div(min_tiles, t.row_tiles);
    t.tile_cols = std::min(n, std::max(min_tile_cols, round_up(ceil_div(n, wanted), tile_granule)));
  }
  t.col_tiles = ceil_div(n, t.tile_cols);
  return t;
}

// OpenBLAS's own threads would split a tile's K differently with their count
// (the defect this design removes); gemm() runs it on one thread per call.
void keep_openblas_single_threaded() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

// cblas rejects a leading dimension of 0 even when the matrix is empty.
blasint leading_dimension(std::int64_t cols) {
  return static_cast<blasint>(std::max<std::int64_t>(cols, 1));
}

struct problem {
  bool transpose_a;
  bool transpose_b;
  float alpha;
  float beta;
  dense_view<const float> a;
  dense_view<const float> b;
  dense_view<float> c;
  std::int64_t k;
};

void multiply_tile(const problem& g, const tiling& t, std::int64_t tile) {
  const std::int64_t i0 = tile / t.col_tiles * t.tile_rows;
  const std::int64_t j0 = tile % t.col_tiles * t.tile_cols;
  const std::int64_t rows = std::min(t.tile_rows, g.c.rows - i0);
  const std::int64_t cols = std::min(t.tile_cols, g.c.cols - j0);
  // Rows i0.. of op(A) and columns j0.. of op(B), where they start in storage.
  const float* a = g.a.data.data() + (g.transpose_a ? i0 : i0 * g.a.cols);
  const float* b = g.b.data.data() + (g.transpose_b ? j0 * g.b.cols : j0);
  cblas_sgemm(CblasRowMajor, g.transpose_a ? CblasTrans : CblasNoTrans,
              g.transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(rows),
              static_cast<blasint>(cols), static_cast<blasint>(g.k), g.alpha, a,
              leading_dimension(g.a.cols), b, leading_dimension(g.b.cols), g.beta,
              g.c.data.data() + i0 * g.c.cols + j0, leading_dimension(g.c.cols));
}

struct thread_setting {
  std::mutex mutex;
  int threads = tbb::info::default_concurrency();
  std::shared_ptr<tbb::task_arena> arena = std::make_shared<tbb::task_arena>(threads);
};

thread_setting& gemm_thread_setting() {
  static thread_setting setting;
  return setting;
}

void multiply(const problem& g) {
  keep_openblas_single_threaded();
  const tiling tiles = plan_tiles(g.c.rows, g.c.cols);
  std::shared_ptr<tbb::task_arena> arena;
  {
    auto& setting = gemm_thread_setting();
    const std::scoped_lock lock(setting.mutex);
    if (setting.threads > 1 && tiles.count() > 1) arena = setting.arena;
  }
  if (!arena) {
    for (std::int64_t tile = 0; tile < tiles.count(); ++tile) multiply_tile(g, tiles, tile);
    return;
  }
  arena->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, tiles.count(), 1), [&](const auto& r) {
      for (std::int64_t tile = r.begin(); tile != r.end(); ++tile) multiply_tile(g, tiles, tile);
    });
  });
}

}  // namespace

void gemm_reference(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
                    dense_view<const float> b, float beta, dense_view<float> c) {
  const std::int64_t k = check_shapes("gemm_reference", transpose_a, transpose_b, a, b, c);
  const auto op = [](dense_view<const float> x, bool transposed, std::int64_t row,
                     std::int64_t col) {
    return transposed ? x.data[col * x.cols + row] : x.data[row * x.cols + col];
  };
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t j = 0; j < c.cols; ++j) {
      float acc = 0.0f;
      for (std::int64_t p = 0; p < k; ++p)
        acc = std::fma(op(a, transpose_a, i, p), op(b, transpose_b, p, j), acc);
      const float scaled = alpha * acc;
      float& out = c.data[i * c.cols + j];
      out = beta == 0.0f ? scaled : std::fma(beta, out, scaled);
    }
}

void gemm(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_stats* stats) {
  const std::int64_t k = check_shapes("gemm", transpose_a, transpose_b, a, b, c);
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  if (m == 0 || n == 0) return;
  const auto start = std::chrono::steady_clock::now();
  if (k == 0)
    gemm_reference(transpose_a, transpose_b, alpha, a, b, beta, c);
  else
    multiply({.transpose_a = transpose_a,
              .transpose_b = transpose_b,
              .alpha = alpha,
              .beta = beta,
              .a = a,
              .b = b,
              .c = c,
              .k = k});
  if (stats == nullptr) return;
  stats->flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats->seconds += seconds;
  ++stats->calls;
  if (stats->log != nullptr) stats->log->push_back({transpose_a, transpose_b, m, n, k, seconds});
}

void set_gemm_threads(int threads) {
  BULKGNN_EXPECTS(threads >= 1, "set_gemm_threads: threads = {} must be at least 1", threads);
  auto& setting = gemm_thread_setting();
  const std::scoped_lock lock(setting.mutex);
  if (threads == setting.threads) return;
  setting.threads = threads;
  setting.arena = std::make_shared<tbb::task_arena>(threads);
}

int gemm_threads() {
  auto& setting = gemm_thread_setting();
  const std::scoped_lock lock(setting.mutex);
  return setting.threads;
}

}  // namespace bulkgnn::trainer
