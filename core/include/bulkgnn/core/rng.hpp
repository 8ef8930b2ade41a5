#pragma once

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/portable_math.hpp"

#include <Random123/philox.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace bulkgnn {

// Identifies one independent random stream. Every random decision of the
// sampler is keyed on what it is about (seed, epoch, minibatch, layer, row),
// never on which thread or which bulk computes it, so the same seed gives the
// same minibatches for any thread count, bulk size, rank count or backend.
struct rng_key {
  std::uint32_t seed = 0;
  std::uint32_t epoch = 0;
  std::uint32_t minibatch = 0;
  std::uint32_t layer = 0;
  std::uint32_t row = 0;
};

// Reserved minibatch value for streams that belong to no minibatch (the epoch
// shuffle, generators).
inline constexpr std::uint32_t no_minibatch = 0xFFFFFFFFu;

// A sequence of random numbers drawn from Philox4x32-10 in counter mode
// (host and CUDA device code alike; the cuda target compiles Random123 with
// R123_CUDA_DEVICE=__host__ __device__):
// key = (seed, epoch), counter = (minibatch, layer, row, block). Each block
// yields four 32-bit words; a stream holds 2^34 words.
class philox_stream {
 public:
  BULKGNN_HOST_DEVICE explicit philox_stream(const rng_key& key)
      : key_{{key.seed, key.epoch}}, counter_{{key.minibatch, key.layer, key.row, 0}} {}

  // Moves a fresh stream to its word `word`, as if that many next_u32()
  // calls had been made: a rank that holds only the entries from position e
  // of a row draws their variates without drawing those before.
  BULKGNN_HOST_DEVICE void skip_to_word(std::uint64_t word) {
    counter_.v[3] = static_cast<std::uint32_t>(word / 4);
    refill();
    used_ = static_cast<int>(word % 4);
  }

  // Uniform 32-bit word.
  BULKGNN_HOST_DEVICE std::uint32_t next_u32() {
    if (used_ == 4) refill();
    return words_.v[used_++];
  }

  // Fills `out` with the next out.size() words, exactly as that many
  // next_u32() calls would, but a whole block at a time (for bulk draws such
  // as dropout masks, where the per-word refill check would dominate).
  BULKGNN_HOST_DEVICE void next_u32s(std::uint32_t* out, std::size_t n) {
    std::size_t i = 0;
    while (i < n && used_ < 4) out[i++] = words_.v[used_++];
    for (; i + 4 <= n; i += 4) {
      refill();
      for (int w = 0; w < 4; ++w) out[i + w] = words_.v[w];
      used_ = 4;
    }
    while (i < n) out[i++] = next_u32();
  }

  // Uniform 64-bit word.
  BULKGNN_HOST_DEVICE std::uint64_t next_u64() {
    const std::uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }

  // Uniform double in the open interval (0, 1), with 53 random bits.
  BULKGNN_HOST_DEVICE double uniform_open01() {
    return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
  }

  // Uniform integer in [0, bound) for 0 < bound < 2^32, exactly uniform
  // (Lemire's multiply-and-reject).
  BULKGNN_HOST_DEVICE std::uint32_t uniform_below(std::uint32_t bound) {
    std::uint64_t product = static_cast<std::uint64_t>(next_u32()) * bound;
    auto low = static_cast<std::uint32_t>(product);
    if (low < bound) {
      const std::uint32_t threshold = (0u - bound) % bound;
      while (low < threshold) {
        product = static_cast<std::uint64_t>(next_u32()) * bound;
        low = static_cast<std::uint32_t>(product);
      }
    }
    return static_cast<std::uint32_t>(product >> 32);
  }

  // Exponential variate with rate 1, the same bits on every back end.
  BULKGNN_HOST_DEVICE double exponential() { return -portable_log(uniform_open01()); }

  // Standard normal variate (Box-Muller; one of the pair is discarded so the
  // stream position does not depend on call history).
  BULKGNN_HOST_DEVICE double normal() {
    const double u1 = uniform_open01();
    const double u2 = uniform_open01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  using philox = r123::Philox4x32;

  BULKGNN_HOST_DEVICE void refill() {
    words_ = philox()(counter_, key_);
    ++counter_.v[3];
    used_ = 0;
  }

  philox::key_type key_;
  philox::ctr_type counter_;
  philox::ctr_type words_{};
  int used_ = 4;
};

// Whether AVX-512 code paths run: the CPU has AVX-512F and the environment
// does not set BULKGNN_NO_AVX512 (with which the tests check the portable
// paths on AVX-512 machines too).
[[nodiscard]] bool cpu_runs_avx512();

// Blocks first_block .. first_block + 15 of the stream of `key`: words[4b + w]
// is word w of block first_block + b, i.e. the 64 words that philox_stream(key)
// hands out from word 4·first_block on. With AVX-512, all 16 blocks at once;
// for bulk draws such as dropout masks.
void philox_16_blocks(const rng_key& key, std::uint32_t first_block, std::uint32_t (&words)[64]);

}  // namespace bulkgnn
