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

// packed_a holds kc columns of mr values (op(A)[i][p] at p·mr + i), packed_b
// kc rows of nr values (op(B)[p][j] at p·nr + j); c and c_old are mr×nr with
// row strides ldc and ld_old (c_old may alias c).
using microkernel_fn = void (*)(std::int64_t kc, const float* packed_a, const float* packed_b,
                                float* c, std::int64_t ldc, const float* c_old, std::int64_t ld_old,
                                const chain_step& step);

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
