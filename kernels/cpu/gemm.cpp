#include "bulkgnn/kernels/rules/gemm.hpp"
#include "bulkgnn/core/rng.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "gemm_microkernel.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

namespace {

// A stored matrix X read as op(X).
struct operand {
  const float* data;
  std::int64_t ld;
  bool transposed;
};

// Columns of op(A) (rows of op(B)) per K block: one packed B panel, kc×nr,
// stays in L1 while the microkernel sweeps the rows of a block of A.
constexpr std::int64_t k_block = 256;
// Rows of op(A) per block: a block of them times k_block stays in L2.
constexpr std::int64_t a_block_rows = 96;
// Fewest rows of C per tile when C is split by rows: a tile streams its B
// panels once per K block, so thin tiles over a long K (weight gradients)
// would stream all of B many times over (8 tiles of 32 rows: 0.75x
// OpenBLAS; 2 of 128: 1.0x).
constexpr std::int64_t min_tile_rows = 96;
// Columns of C per tile, bounding the B panels one A block meets.
constexpr std::int64_t max_tile_cols = 256;
// Tiles per thread, so that uneven tiles and a busy core even out.
constexpr std::int64_t tiles_per_thread = 4;
// A transposed A is packed only where its rows lie at least this many floats
// apart and several B panels reuse each block: kc rows a page or more apart
// fall into few cache sets and would be fetched again for every B panel.
constexpr std::int64_t pack_transposed_a_from_ld = 1024;
// Products below this many flops run on the calling thread alone.
constexpr double parallel_from_flops = 1 << 20;

const detail::microkernel& selected_microkernel() {
  static const detail::microkernel kernel = [] {
    if (std::getenv("BULKGNN_PORTABLE_GEMM") != nullptr) return detail::portable_microkernel();
#if defined(__x86_64__)
    if (cpu_runs_avx512()) return detail::avx512_microkernel();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return detail::avx2_microkernel();
#endif
    return detail::portable_microkernel();
  }();
  return kernel;
}

// Grow-only float storage aligned to cache lines.
class scratch {
 public:
  float* floats(std::int64_t count) {
    const auto needed = static_cast<std::size_t>(count);
    if (needed > capacity_) {
      storage_.reset(static_cast<float*>(
          ::operator new[](needed * sizeof(float), std::align_val_t{alignment})));
      capacity_ = needed;
    }
    return storage_.get();
  }

 private:
  static constexpr std::size_t alignment = 64;
  struct aligned_delete {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t{alignment}); }
  };
  std::unique_ptr<float[], aligned_delete> storage_;
  std::size_t capacity_ = 0;
};

// k rows of NR floats, ld apart, one after another: a copy of constant size
// compiles to a few vector moves, where a call to memmove per row was a
// seventh of a weight gradient's time.
template <int NR>
void copy_rows(const float* src, std::int64_t ld, std::int64_t k, float* dst) {
  for (std::int64_t p = 0; p < k; ++p) std::memcpy(dst + p * NR, src + p * ld, sizeof(float) * NR);
}

// Columns j0 .. j0 + nr of op(B) (zero past n) over rows k0 .. k0 + kc, row
// p at (p - k0)·nr.
void pack_b_panel(operand b, std::int64_t k0, std::int64_t kc, std::int64_t n, std::int64_t j0,
                  int nr, float* dst) {
  const std::int64_t cols = std::min<std::int64_t>(nr, n - j0);
  if (!b.transposed && cols == nr && (nr == 8 || nr == 16 || nr == 32)) {
    const float* src = b.data + k0 * b.ld + j0;
    if (nr == 8) copy_rows<8>(src, b.ld, kc, dst);
    if (nr == 16) copy_rows<16>(src, b.ld, kc, dst);
    if (nr == 32) copy_rows<32>(src, b.ld, kc, dst);
    return;
  }
  if (!b.transposed) {
    for (std::int64_t p = 0; p < kc; ++p) {
      const float* src = b.data + (k0 + p) * b.ld + j0;
      std::copy(src, src + cols, dst + p * nr);
      std::fill(dst + p * nr + cols, dst + (p + 1) * nr, 0.0f);
    }
    return;
  }
  std::fill(dst, dst + kc * nr, 0.0f);
  for (std::int64_t j = 0; j < cols; ++j) {
    const float* src = b.data + (j0 + j) * b.ld + k0;
    for (std::int64_t p = 0; p < kc; ++p) dst[p * nr + j] = src[p];
  }
}

// Rows i0 .. i0 + rows of op(A) = Aᵀ over columns k0 .. k0 + kc, in panels
// of mr rows: panel q at q·mr·kc, column p at p·mr within it. A short last
// panel is left short: the microkernel never reads past its rows.
void pack_transposed_a_block(operand a, std::int64_t i0, std::int64_t rows, std::int64_t k0,
                             std::int64_t kc, int mr, float* dst) {
  for (std::int64_t q = 0; q < rows; q += mr, dst += mr * kc) {
    const std::int64_t panel_rows = std::min<std::int64_t>(mr, rows - q);
    for (std::int64_t p = 0; p < kc; ++p) {
      const float* src = a.data + (k0 + p) * a.ld + i0 + q;
      std::copy(src, src + panel_rows, dst + p * mr);
    }
  }
}

struct problem {
  operand a;
  operand b;
  float alpha;
  float beta;
  float* c;
  std::int64_t ldc;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
  bool pack_a;  // else the microkernel reads A where it is stored
};

// Rows i .. i + mr of op(A) from column k0 on, read where A stores them: a
// plain A's rows are streams along p, a transposed A has the mr values of
// one p side by side. Neither needs a copy proportional to K·M.
void point_at_a(operand a, std::int64_t i, std::int64_t k0, detail::microtile& t) {
  if (a.transposed) {
    t.a = a.data + k0 * a.ld + i;
    t.a_row_stride = 1;
    t.a_step = a.ld;
  } else {
    t.a = a.data + i * a.ld + k0;
    t.a_row_stride = a.ld;
    t.a_step = 1;
  }
}

// C[row0 .. row1, col0 .. col1], K block after K block; partial sums wait in
// C itself, so with beta != 0 and several K blocks the old C is saved first.
// Each K block of the tile's columns of B is packed here, so that it stays
// in L2 for all the tile's rows (packing all of B up front for all tiles
// wrote and re-read K·N floats through memory).
void run_tile(const problem& g, const detail::microkernel& kernel, std::int64_t row0,
              std::int64_t row1, std::int64_t col0, std::int64_t col1) {
  thread_local scratch a_scratch;
  thread_local scratch b_scratch;
  thread_local scratch old_scratch;
  const int mr = kernel.mr;
  const int nr = kernel.nr;
  const float* c_old = g.c + row0 * g.ldc + col0;
  std::int64_t ld_old = g.ldc;
  if (g.beta != 0.0f && g.k > k_block) {
    ld_old = col1 - col0;
    float* saved = old_scratch.floats((row1 - row0) * ld_old);
    for (std::int64_t i = row0; i < row1; ++i)
      std::copy(g.c + i * g.ldc + col0, g.c + i * g.ldc + col1, saved + (i - row0) * ld_old);
    c_old = saved;
  }
  const std::int64_t block_rows = std::max<std::int64_t>(1, a_block_rows / mr) * mr;
  float* packed_a = g.pack_a ? a_scratch.floats(block_rows * k_block) : nullptr;
  float* packed_b = b_scratch.floats((col1 - col0 + nr - 1) / nr * nr * k_block);
  for (std::int64_t k0 = 0; k0 < g.k; k0 += k_block) {
    const std::int64_t kc = std::min(k_block, g.k - k0);
    const detail::chain_step step{
        .first = k0 == 0, .last = k0 + kc == g.k, .alpha = g.alpha, .beta = g.beta};
    for (std::int64_t j = col0; j < col1; j += nr)
      pack_b_panel(g.b, k0, kc, g.n, j, nr, packed_b + (j - col0) * kc);
    for (std::int64_t i0 = row0; i0 < row1; i0 += block_rows) {
      const std::int64_t rows = std::min(block_rows, row1 - i0);
      if (g.pack_a) pack_transposed_a_block(g.a, i0, rows, k0, kc, mr, packed_a);
      for (std::int64_t j = col0; j < col1; j += nr) {
        detail::microtile t{.kc = kc,
                            .packed_b = packed_b + (j - col0) * kc,
                            .ldc = g.ldc,
                            .ld_old = ld_old,
                            .cols = static_cast<int>(std::min<std::int64_t>(nr, col1 - j))};
        for (std::int64_t i = i0; i < i0 + rows; i += mr) {
          if (g.pack_a) {
            t.a = packed_a + (i - i0) * kc;
            t.a_row_stride = 1;
            t.a_step = mr;
          } else {
            point_at_a(g.a, i, k0, t);
          }
          t.c = g.c + i * g.ldc + j;
          t.c_old = c_old + (i - row0) * ld_old + (j - col0);
          t.rows = static_cast<int>(std::min<std::int64_t>(mr, row1 - i));
          kernel.run(t, step);
        }
      }
    }
  }
}

// C cut into row_tiles × col_tiles tiles of whole microkernel panels.
struct tiling {
  std::int64_t row_panels;
  std::int64_t col_panels;
  std::int64_t row_tiles;
  std::int64_t col_tiles;

  [[nodiscard]] std::int64_t count() const { return row_tiles * col_tiles; }
};

tiling plan_tiles(std::int64_t m, std::int64_t n, const detail::microkernel& kernel, int threads) {
  tiling t{.row_panels = (m + kernel.mr - 1) / kernel.mr,
           .col_panels = (n + kernel.nr - 1) / kernel.nr,
           .row_tiles = 1,
           .col_tiles = 1};
  t.col_tiles = (t.col_panels * kernel.nr + max_tile_cols - 1) / max_tile_cols;
  // Rows first, keeping min_tile_rows in each (a row tile reads its rows of
  // A once, and the B blocks it packs serve all of them); columns only while
  // some thread would have no tile.
  const std::int64_t min_panels = (min_tile_rows + kernel.mr - 1) / kernel.mr;
  while (t.count() < tiles_per_thread * threads) {
    if (t.row_panels >= min_panels * (t.row_tiles + 1))
      ++t.row_tiles;
    else if (t.count() < threads && t.col_panels >= t.col_tiles + 1)
      ++t.col_tiles;
    else
      break;
  }
  return t;
}

void multiply(problem g, const detail::microkernel& kernel) {
  const bool parallel =
      2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) >=
      parallel_from_flops;
  const int threads = parallel ? tbb::this_task_arena::max_concurrency() : 1;
  const tiling tiles = plan_tiles(g.m, g.n, kernel, threads);
  g.pack_a = g.a.transposed && g.a.ld >= pack_transposed_a_from_ld &&
             tiles.col_panels > 2 * tiles.col_tiles;
  const auto run_tiles = [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t rt = t / tiles.col_tiles;
      const std::int64_t ct = t % tiles.col_tiles;
      const std::int64_t row0 = rt * tiles.row_panels / tiles.row_tiles * kernel.mr;
      const std::int64_t row1 =
          std::min(g.m, (rt + 1) * tiles.row_panels / tiles.row_tiles * kernel.mr);
      const std::int64_t col0 = ct * tiles.col_panels / tiles.col_tiles * kernel.nr;
      const std::int64_t col1 =
          std::min(g.n, (ct + 1) * tiles.col_panels / tiles.col_tiles * kernel.nr);
      run_tile(g, kernel, row0, row1, col0, col1);
    }
  };
  if (threads == 1) {
    run_tiles(0, tiles.count());
    return;
  }
  // Isolated, so that a thread waiting here never picks up unrelated work
  // (a sampler's task) and holds the train step behind it.
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, tiles.count(), 1),
                      [&](const auto& r) { run_tiles(r.begin(), r.end()); });
  });
}

}  // namespace

void gemm(gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c) {
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  if (c.empty()) return;
  if (k == 0) {
    for (float& out : c.data) out = rules::gemm_epilogue(0.0f, alpha, beta, out);
    return;
  }
  multiply({.a = {a.data.data(), a.cols, op_a == gemm_op::transposed},
            .b = {b.data.data(), b.cols, op_b == gemm_op::transposed},
            .alpha = alpha,
            .beta = beta,
            .c = c.data.data(),
            .ldc = c.cols,
            .m = c.rows,
            .n = c.cols,
            .k = k,
            .pack_a = false},
           selected_microkernel());
}

std::string_view gemm_kernel_name() { return selected_microkernel().name; }

}  // namespace bulkgnn::kernels::cpu
