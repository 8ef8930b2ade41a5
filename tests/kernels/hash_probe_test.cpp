// The CUDA relabel's hash-table probing, run on the host with a plain
// compare-and-swap: every key finds one slot of its own, every time.
#include "bulkgnn/kernels/rules/hash_probe.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

namespace bulkgnn::kernels::rules {
namespace {

struct host_table {
  explicit host_table(std::uint64_t items) : keys(hash_capacity(items), empty_slot_key) {}
  std::uint64_t slot_of(std::uint64_t key) {
    return find_or_claim_slot(
        key, keys.size() - 1,
        [&](std::uint64_t slot, std::uint64_t expected, std::uint64_t desired) {
          const std::uint64_t held = keys[slot];
          if (held == expected) keys[slot] = desired;
          return held;
        });
  }
  std::vector<std::uint64_t> keys;
};

TEST(HashProbe, EveryKeyHasOneSlotOfItsOwnAndFindsItAgain) {
  std::mt19937_64 gen(1);
  std::uniform_int_distribution<std::uint32_t> vertex(0, 5000);
  std::vector<std::uint64_t> items;
  for (std::uint64_t segment = 0; segment < 20; ++segment)
    for (int k = 0; k < 3000; ++k) items.push_back(segment << 32 | vertex(gen));  // repeats
  host_table table(items.size());
  std::map<std::uint64_t, std::uint64_t> slot_of_key;
  std::set<std::uint64_t> used;
  for (const auto key : items) {
    const auto slot = table.slot_of(key);
    ASSERT_EQ(table.keys[slot], key);
    const auto [at, inserted] = slot_of_key.emplace(key, slot);
    if (inserted)
      EXPECT_TRUE(used.insert(slot).second) << "two keys share slot " << slot;
    else
      EXPECT_EQ(at->second, slot);
  }
  for (const auto& [key, slot] : slot_of_key) EXPECT_EQ(table.slot_of(key), slot);
}

TEST(HashProbe, CapacityIsAPowerOfTwoAtLeastTwiceTheItems) {
  for (const std::uint64_t items : {0ull, 1ull, 8ull, 9ull, 1000ull, 1ull << 20}) {
    const auto capacity = hash_capacity(items);
    EXPECT_EQ(capacity & (capacity - 1), 0u);
    EXPECT_GE(capacity, 2 * items);
    EXPECT_GE(capacity, 16u);
  }
}

TEST(HashProbe, MixingSpreadsSegmentKeysOverTheTable) {
  // Consecutive vertices of one segment land in many different slots.
  std::set<std::uint64_t> slots;
  for (std::uint64_t v = 0; v < 1024; ++v) slots.insert(mix_key(7ull << 32 | v) & 2047);
  EXPECT_GT(slots.size(), 600u);
}

}  // namespace
}  // namespace bulkgnn::kernels::rules
