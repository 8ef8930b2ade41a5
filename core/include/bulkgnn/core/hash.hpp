#pragma once

#include <cstdint>
#include <span>

namespace bulkgnn {

// The splitmix64 finaliser: a bijection on 64-bit words with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Order-independent hash of a multiset of 64-bit words (the sum of their
// mixed values), so a set of edges hashes the same in any order without
// being sorted first.
class multiset_hasher {
 public:
  void add(std::uint64_t word) {
    sum_ += mix64(word ^ 0xD1B54A32D192ED03ull);
    ++count_;
  }
  [[nodiscard]] std::uint64_t sum() const { return sum_; }
  [[nodiscard]] std::uint64_t count() const { return count_; }

 private:
  std::uint64_t sum_ = 0;
  std::uint64_t count_ = 0;
};

// Streaming 64-bit hash used for output digests. It is stable across
// platforms, compilers and versions: changing it changes every recorded digest.
class digest_hasher {
 public:
  void add(std::uint64_t word) { state_ = mix(state_ ^ mix(word + 0x9E3779B97F4A7C15ull)); }
  void add(std::span<const std::int32_t> words) {
    add(static_cast<std::uint64_t>(words.size()));
    for (auto w : words) add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(w)));
  }
  [[nodiscard]] std::uint64_t value() const { return mix(state_); }

 private:
  static std::uint64_t mix(std::uint64_t z) { return mix64(z); }
  std::uint64_t state_ = 0x6A09E667F3BCC909ull;
};

}  // namespace bulkgnn
