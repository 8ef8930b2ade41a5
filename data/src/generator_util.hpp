#pragma once

// Building blocks shared by the synthetic graph generators: keyed random
// streams, a two-pass CSR assembler for edge streams too large to hold, and
// writers for random features, labels and splits.

#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/types.hpp"
#include "bulkgnn/data/dataset.hpp"

#include <nlohmann/json.hpp>

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
  edge_weights,
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

// mmap/munmap/madvise(MADV_DONTNEED) behind scratch_array.
void* reserve_scratch(std::size_t bytes);
void release_scratch(void* data, std::size_t bytes);
void release_scratch_pages(void* data, std::size_t bytes);

// Anonymous memory that holds the edges between the two passes and the final
// file, returned to the system piecewise while it is copied out so that it and
// the output are never both fully resident.
template <class T>
class scratch_array {
 public:
  explicit scratch_array(std::size_t count)
      : data_(static_cast<T*>(reserve_scratch(count * sizeof(T)))), count_(count) {}
  ~scratch_array() { release_scratch(data_, count_ * sizeof(T)); }
  scratch_array(const scratch_array&) = delete;
  scratch_array& operator=(const scratch_array&) = delete;

  [[nodiscard]] std::span<T> span() const { return {data_, count_}; }
  // Gives back the whole pages below element `end`; they read as zero after.
  void release_below(std::size_t end) { release_scratch_pages(data_, end * sizeof(T)); }

 private:
  T* data_;
  std::size_t count_;
};

// Assembles an edge stream into the native CSR (row = destination, columns
// sorted, duplicates and self loops dropped) without ever holding the edge
// pairs in random order: a generator is run twice, so it must emit the same
// edges for a chunk every time. The first run counts each chunk's entries per
// bucket of 2^16 consecutive rows; the second appends each entry to its
// chunk's slice of its bucket, a few thousand sequential write streams
// instead of a random atomic per edge (hot R-MAT rows made those contend);
// then each bucket is sorted into rows on its own.
class csr_assembler {
 public:
  csr_assembler(std::int64_t nodes, bool symmetric, std::string label, bool quiet);

  // Runs emit_chunk(chunk, add) for each chunk twice, where add(src, dst)
  // records the edge src -> dst (and dst -> src when symmetric), then writes
  // indptr.npy and indices.npy. Returns the number of stored edges.
  template <class EmitChunk>
  edge_t build(native_writer& writer, std::int64_t chunks, EmitChunk&& emit_chunk) {
    chunk_buckets_.assign(static_cast<std::size_t>(chunks * buckets_), 0);
    for_each_chunk(chunks, label_ + ": count", quiet_, [&](std::int64_t chunk) {
      edge_t* counts = chunk_buckets_.data() + chunk * buckets_;
      emit_chunk(chunk, [&](std::uint32_t src, std::uint32_t dst) {
        if (src == dst) return;
        ++counts[dst >> row_bits];
        if (symmetric_) ++counts[src >> row_bits];
      });
    });
    start_placing(chunks);
    for_each_chunk(chunks, label_ + ": place", quiet_, [&](std::int64_t chunk) {
      edge_t* cursors = chunk_buckets_.data() + chunk * buckets_;
      emit_chunk(chunk, [&](std::uint32_t src, std::uint32_t dst) {
        if (src == dst) return;
        place(cursors, src, dst);
        if (symmetric_) place(cursors, dst, src);
      });
    });
    return finish(writer);
  }

 private:
  static constexpr int row_bits = 16;
  static constexpr std::uint32_t row_mask = (1u << row_bits) - 1;

  void place(edge_t* cursors, std::uint32_t src, std::uint32_t dst) {
    const edge_t at = cursors[dst >> row_bits]++;
    sources_->span()[at] = static_cast<vertex_t>(src);
    rows_->span()[at] = static_cast<std::uint16_t>(dst & row_mask);
  }

  void start_placing(std::int64_t chunks);
  edge_t finish(native_writer& writer);
  void sort_bucket(std::int64_t bucket, std::span<edge_t> indptr);
  void copy_buckets(std::span<const edge_t> indptr, std::span<vertex_t> indices);
  [[nodiscard]] std::int64_t bucket_rows(std::int64_t bucket) const;

  std::int64_t nodes_;
  bool symmetric_;
  std::string label_;
  bool quiet_;
  std::int64_t buckets_;
  // chunk x bucket entry counts after the first run, then each chunk's write
  // cursor in each bucket during the second.
  std::vector<edge_t> chunk_buckets_;
  std::vector<edge_t> bucket_begin_;  // buckets_ + 1 offsets into the scratch
  std::unique_ptr<scratch_array<vertex_t>> sources_;
  std::unique_ptr<scratch_array<std::uint16_t>> rows_;  // row within the bucket
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

// Writes edge_weight.npy for the indptr.npy and indices.npy already written:
// entry (v, u) weighs a uniform draw in (0, 1] keyed by the unordered pair
// {u, v}, so both directions of an undirected edge weigh the same.
void write_edge_weights(native_writer& writer, std::uint32_t seed, bool quiet);

// Writes split/random/{train,valid,test}.npy: a random 60/20/20 partition of
// the nodes, each part sorted. Returns the manifest's "splits" list.
nlohmann::json write_random_split(native_writer& writer, std::int64_t nodes, std::uint32_t seed);

}  // namespace bulkgnn::data::detail
