#include "bulkgnn/core/rng.hpp"

#include "bulkgnn/core/avx512.hpp"

#include <cstdlib>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bulkgnn {
namespace {

void philox_16_blocks_portable(const rng_key& key, std::uint32_t first_block,
                               std::uint32_t (&words)[64]) {
  const r123::Philox4x32::key_type k{{key.seed, key.epoch}};
  for (std::uint32_t b = 0; b < 16; ++b) {
    const r123::Philox4x32::ctr_type counter{{key.minibatch, key.layer, key.row, first_block + b}};
    const auto block = r123::Philox4x32()(counter, k);
    for (int w = 0; w < 4; ++w) words[4 * b + w] = block.v[w];
  }
}

#if defined(__x86_64__)
// Philox4x32-10 on 16 counters at once, one block per 32-bit lane: the rounds
// of Random123's philox4x32 (multipliers 0xD2511F53 and 0xCD9E8D57, Weyl key
// bumps 0x9E3779B9 and 0xBB67AE85), with the 32×32→64 products split into
// even and odd lanes.
BULKGNN_AVX512_BEGIN

struct philox_lanes {
  __m512i c0, c1, c2, c3;
};

__attribute__((target("avx512f"))) inline __m512i mulhi32(__m512i a, __m512i m) {
  const __m512i even = _mm512_mul_epu32(a, m);                        // lanes 0, 2, ...
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 1, 3, ...
  return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

__attribute__((target("avx512f"))) void philox_16_blocks_avx512(const rng_key& key,
                                                                std::uint32_t first_block,
                                                                std::uint32_t (&words)[64]) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  const __m512i w0 = _mm512_set1_epi32(static_cast<int>(0x9E3779B9u));
  const __m512i w1 = _mm512_set1_epi32(static_cast<int>(0xBB67AE85u));
  __m512i k0 = _mm512_set1_epi32(static_cast<int>(key.seed));
  __m512i k1 = _mm512_set1_epi32(static_cast<int>(key.epoch));
  philox_lanes c{
      _mm512_set1_epi32(static_cast<int>(key.minibatch)),
      _mm512_set1_epi32(static_cast<int>(key.layer)), _mm512_set1_epi32(static_cast<int>(key.row)),
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first_block)),
                       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = _mm512_add_epi32(k0, w0);
      k1 = _mm512_add_epi32(k1, w1);
    }
    const __m512i hi0 = mulhi32(c.c0, m0);
    const __m512i lo0 = _mm512_mullo_epi32(c.c0, m0);
    const __m512i hi1 = mulhi32(c.c2, m1);
    const __m512i lo1 = _mm512_mullo_epi32(c.c2, m1);
    c = {_mm512_xor_si512(_mm512_xor_si512(hi1, c.c1), k0), lo1,
         _mm512_xor_si512(_mm512_xor_si512(hi0, c.c3), k1), lo0};
  }
  alignas(64) std::uint32_t lanes[4][16];
  _mm512_store_si512(lanes[0], c.c0);
  _mm512_store_si512(lanes[1], c.c1);
  _mm512_store_si512(lanes[2], c.c2);
  _mm512_store_si512(lanes[3], c.c3);
  for (int b = 0; b < 16; ++b)
    for (int w = 0; w < 4; ++w) words[4 * b + w] = lanes[w][b];
}

BULKGNN_AVX512_END
#endif

}  // namespace

bool cpu_runs_avx512() {
#if defined(__x86_64__)
  static const bool runs =
      __builtin_cpu_supports("avx512f") && std::getenv("BULKGNN_NO_AVX512") == nullptr;
  return runs;
#else
  return false;
#endif
}

void philox_16_blocks(const rng_key& key, std::uint32_t first_block, std::uint32_t (&words)[64]) {
#if defined(__x86_64__)
  if (cpu_runs_avx512()) {
    philox_16_blocks_avx512(key, first_block, words);
    return;
  }
#endif
  philox_16_blocks_portable(key, first_block, words);
}

}  // namespace bulkgnn
