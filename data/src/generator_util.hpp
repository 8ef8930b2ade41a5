#pragma once

// Building blocks shared by the synthetic graph generators: keyed random
// streams, a two-pass CSR assembler for edge streams too large to hold, and
// writers for random features, labels and splits.

#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/types.hpp"
#include "bulkgnn/data/dataset.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::data::detail {

// Every random decision of a generator is keyed on its purpose (rng_key::layer)
// and on the chunk or node it concerns (rng_key::row), so the output never
// depends on how work is spread over threads.
enum class purpose : std::uint32_t {
  edges = 1,
  vertex_scramble,
  features,
  labels,
  split,
  class_directions,
  class_assignment,
};

[[nodiscard]] inline rng_key generator_key(std::uint32_t seed, purpose what, std::uint64_t row) {
  return {.seed = seed,
          .epoch = 0,
          .minibatch = no_minibatch,
          .layer = static_cast<std::uint32_t>(what),
          .row = static_cast<std::uint32_t>(row)};
}

// xoshiro256** seeded from a keyed Philox stream: Philox costs ten rounds per
// four words, too slow for the dozens of random bits each R-MAT edge needs.
class fast_rng {
 public:
  explicit fast_rng(const rng_key& key) {
    philox_stream seeder(key);
    for (auto& word : state_) word = seeder.next_u64();
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4];
};

// Calls body(chunk) for every chunk in [0, chunks) on all worker threads,
// drawing a progress line labelled `label` between waves of chunks.
void for_each_chunk(std::int64_t chunks, const std::string& label, bool quiet,
                    const std::function<void(std::int64_t)>& body);

// Anonymous memory for edges between the two passes and the final file,
// returned to the system piecewise while it is copied out so that it and the
// output are never both fully resident.
class scratch_indices {
 public:
  explicit scratch_indices(std::size_t count);
  ~scratch_indices();
  scratch_indices(const scratch_indices&) = delete;
  scratch_indices& operator=(const scratch_indices&) = delete;

  [[nodiscard]] std::span<vertex_t> span() const { return {data_, count_}; }
  // Gives back the whole pages below element `end`; they read as zero after.
  void release_below(std::size_t end);

 private:
  vertex_t* data_ = nullptr;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
};

// Assembles an edge stream into the native CSR (row = destination, columns
// sorted, duplicates and self loops dropped) without ever holding the edge
// pairs: a generator is run twice, once to count row lengths and once to place
// the sources, so it must emit the same edges for a chunk every time.
class csr_assembler {
 public:
  csr_assembler(std::int64_t nodes, bool symmetric, std::string label, bool quiet);

  // Runs emit_chunk(chunk, add) for each chunk twice, where add(src, dst)
  // records the edge src -> dst (and dst -> src when symmetric), then writes
  // indptr.npy and indices.npy. Returns the number of stored edges.
  template <class EmitChunk>
  edge_t build(native_writer& writer, std::int64_t chunks, EmitChunk&& emit_chunk) {
    for_each_chunk(chunks, label_ + ": count", quiet_, [&](std::int64_t chunk) {
      emit_chunk(chunk, [this](std::uint32_t src, std::uint32_t dst) { count(src, dst); });
    });
    start_placing();
    for_each_chunk(chunks, label_ + ": place", quiet_, [&](std::int64_t chunk) {
      emit_chunk(chunk, [this](std::uint32_t src, std::uint32_t dst) { place(src, dst); });
    });
    return finish(writer);
  }

 private:
  void count(std::uint32_t src, std::uint32_t dst) {
    if (src == dst) return;
    increment(dst);
    if (symmetric_) increment(src);
  }
  void place(std::uint32_t src, std::uint32_t dst) {
    if (src == dst) return;
    (*scratch_).span()[increment(dst)] = static_cast<vertex_t>(src);
    if (symmetric_) (*scratch_).span()[increment(src)] = static_cast<vertex_t>(dst);
  }
  edge_t increment(std::uint32_t row) {
    return std::atomic_ref<edge_t>(cursor_[row]).fetch_add(1, std::memory_order_relaxed);
  }

  void start_placing();
  edge_t finish(native_writer& writer);
  void sort_rows(std::span<edge_t> new_indptr);
  void copy_rows(std::span<const edge_t> new_indptr, std::span<vertex_t> indices);
  [[nodiscard]] edge_t row_begin(std::int64_t row) const { return row == 0 ? 0 : cursor_[row - 1]; }

  std::int64_t nodes_;
  bool symmetric_;
  std::string label_;
  bool quiet_;
  // Row lengths after counting, then each row's insert cursor, which ends at
  // the row's end once every edge is placed.
  std::vector<edge_t> cursor_;
  std::unique_ptr<scratch_indices> scratch_;
};

// Writes features.npy with independent N(0, 1) entries plus, when
// class_means is not empty, row class_means[label[v]] added to node v.
void write_features(native_writer& writer, std::int64_t nodes, int features, std::uint32_t seed,
                    std::span<const std::int32_t> labels, std::span<const float> class_means,
                    bool quiet);

// A uniform random permutation of [0, n), drawn from one keyed stream.
[[nodiscard]] std::vector<vertex_t> random_permutation(std::int64_t n, std::uint32_t seed,
                                                       purpose what);

void write_labels(native_writer& writer, std::span<const std::int32_t> labels);

// Writes split/random/{train,valid,test}.npy: a random 60/20/20 partition of
// the nodes, each part sorted. Returns the manifest's "splits" list.
nlohmann::json write_random_split(native_writer& writer, std::int64_t nodes, std::uint32_t seed);

}  // namespace bulkgnn::data::detail
