#pragma once

// The register-blocked innermost step of the cpu gemm(): one mr×nr tile of C over one
// block of K, on packed panels. Every path computes exactly the chain that
// gemm.hpp defines, so they are interchangeable bit for bit.

#include <cstdint>
#include <string_view>

namespace bulkgnn::kernels::cpu::detail {

// Where a K block lies in the chain: the first starts the accumulators at 0,
// later ones continue from the partial sums stored in C, and the last applies
// the alpha/beta epilogue (reading the old C from c_old).
struct chain_step {
  bool first = true;
  bool last = true;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// One tile of C over kc steps of the chain. op(A)[r][p] is read at
// a[r·a_row_stride + p·a_step], so that a packed panel (1, mr), a transposed
// A (1, lda) and a plain A (lda, 1) need no copy; rows of the tile past
// `rows` read row rows-1 instead and are never stored. packed_b holds kc
// rows of nr values (op(B)[p][j] at p·nr + j, zero past `cols`). c and c_old
// are rows×cols with row strides ldc and ld_old (c_old may alias c).
struct microtile {
  std::int64_t kc = 0;
  const float* a = nullptr;
  std::int64_t a_row_stride = 0;
  std::int64_t a_step = 0;
  const float* packed_b = nullptr;
  float* c = nullptr;
  std::int64_t ldc = 0;
  const float* c_old = nullptr;
  std::int64_t ld_old = 0;
  int rows = 0;
  int cols = 0;
};

using microkernel_fn = void (*)(const microtile& tile, const chain_step& step);

struct microkernel {
  std::string_view name;
  int mr = 0;
  int nr = 0;
  microkernel_fn run = nullptr;
};

inline constexpr int max_mr = 12;
inline constexpr int max_nr = 32;

[[nodiscard]] microkernel portable_microkernel();
#if defined(__x86_64__)
[[nodiscard]] microkernel avx2_microkernel();
[[nodiscard]] microkernel avx512_microkernel();
#endif

}  // namespace bulkgnn::kernels::cpu::detail
