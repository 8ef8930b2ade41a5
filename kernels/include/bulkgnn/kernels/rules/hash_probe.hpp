#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"

// The open-addressing hash table of the CUDA relabel (relabel_method::hash
// in kernels/cuda/relabel.cu): 64-bit keys, linear probing in a power-of-two table.
// The probe loop is written once over a compare-and-swap that the caller
// supplies (atomicCAS on the device, a plain exchange in the host tests), so
// the host tests check the same probing that the kernels run.
namespace bulkgnn::kernels::rules {

inline constexpr std::uint64_t empty_slot_key = ~std::uint64_t{0};

// MurmurHash3's 64-bit finaliser: (segment, vertex) keys differ in few bits,
// and linear probing needs them spread over the table.
BULKGNN_HOST_DEVICE inline std::uint64_t mix_key(std::uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ull;
  key ^= key >> 33;
  return key;
}

// The slot of `key` (never empty_slot_key) in keys[0, mask + 1): the slot
// that already holds it, or the empty slot it claims. compare_and_swap(slot,
// expected, desired) stores desired if the slot holds expected and returns
// what the slot held. The table must have an empty slot left.
template <class CompareAndSwap>
BULKGNN_HOST_DEVICE std::uint64_t find_or_claim_slot(std::uint64_t key, std::uint64_t mask,
                                                     CompareAndSwap&& compare_and_swap) {
  for (std::uint64_t slot = mix_key(key) & mask;; slot = (slot + 1) & mask) {
    const std::uint64_t held = compare_and_swap(slot, empty_slot_key, key);
    if (held == empty_slot_key || held == key) return slot;
  }
}

// A power-of-two capacity at least twice `items`: probes stay short.
BULKGNN_HOST_DEVICE inline std::uint64_t hash_capacity(std::uint64_t items) {
  std::uint64_t capacity = 16;
  while (capacity < 2 * items) capacity *= 2;
  return capacity;
}

}  // namespace bulkgnn::kernels::rules
