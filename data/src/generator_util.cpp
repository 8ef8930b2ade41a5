#include "generator_util.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/interrupt.hpp"
#include "bulkgnn/core/progress.hpp"

#include <sys/mman.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>

namespace bulkgnn::data::detail {

namespace {

// Chunks per progress update: large enough that the wave barrier costs
// little, small enough that the display moves.
constexpr std::int64_t chunks_per_wave = 64;
// Buckets (of 2^16 rows) copied out before the scratch below them is given back.
constexpr std::int64_t buckets_per_release = 16;
constexpr std::int64_t nodes_per_chunk = 4096;

std::int64_t chunks_for(std::int64_t items, std::int64_t per_chunk) {
  return (items + per_chunk - 1) / per_chunk;
}

// Fills `out` with N(0, 1) variates, using both halves of each Box-Muller pair.
void fill_normal(philox_stream& stream, std::span<float> out) {
  constexpr double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(stream.uniform_open01()));
    const double angle = two_pi * stream.uniform_open01();
    out[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < out.size()) out[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

}  // namespace

void for_each_chunk(std::int64_t chunks, const std::string& label, bool quiet,
                    const std::function<void(std::int64_t)>& body) {
  const interrupt_scope polled;  // a signal unwinds the generator and its staging
  progress bar(label, chunks, " chunks", quiet);
  for (std::int64_t begin = 0; begin < chunks; begin += chunks_per_wave) {
    const std::int64_t end = std::min(chunks, begin + chunks_per_wave);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(begin, end, 1),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t chunk = range.begin(); chunk != range.end(); ++chunk)
                          body(chunk);
                      });
    bar.update(end);
    throw_if_interrupted();
  }
  bar.finish();
}

void* reserve_scratch(std::size_t bytes) {
  void* memory = mmap(nullptr, std::max<std::size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    throw error(
        fmt::format("cannot reserve {} bytes for edge placement: {}", bytes, std::strerror(errno)));
  // Fewer TLB misses for the many write streams and the per-bucket sorts.
  madvise(memory, bytes, MADV_HUGEPAGE);
  return memory;
}

void release_scratch(void* data, std::size_t bytes) {
  munmap(data, std::max<std::size_t>(bytes, 1));
}

void release_scratch_pages(void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes >= page) madvise(data, bytes / page * page, MADV_DONTNEED);
}

csr_assembler::csr_assembler(std::int64_t nodes, bool symmetric, std::string label, bool quiet)
    : nodes_(nodes),
      symmetric_(symmetric),
      label_(std::move(label)),
      quiet_(quiet),
      buckets_(chunks_for(nodes, std::int64_t{1} << row_bits)) {}

std::int64_t csr_assembler::bucket_rows(std::int64_t bucket) const {
  return std::min(std::int64_t{1} << row_bits, nodes_ - (bucket << row_bits));
}

// Lays the buckets out one after another, each holding its entries in chunk
// order, so that where an entry lands depends only on the chunk and the order
// of emission within it.
void csr_assembler::start_placing(std::int64_t chunks) {
  bucket_begin_.assign(static_cast<std::size_t>(buckets_ + 1), 0);
  edge_t total = 0;
  for (std::int64_t bucket = 0; bucket < buckets_; ++bucket) {
    bucket_begin_[bucket] = total;
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk)
      total += std::exchange(chunk_buckets_[chunk * buckets_ + bucket], total);
  }
  bucket_begin_[buckets_] = total;
  sources_ = std::make_unique<scratch_array<vertex_t>>(static_cast<std::size_t>(total));
  rows_ = std::make_unique<scratch_array<std::uint16_t>>(static_cast<std::size_t>(total));
}

edge_t csr_assembler::finish(native_writer& writer) {
  std::vector<edge_t>().swap(chunk_buckets_);
  npy_array indptr_array = writer.create("indptr.npy", dtype::int64, {nodes_ + 1});
  const auto indptr = indptr_array.as<edge_t>();
  indptr[0] = 0;
  for_each_chunk(buckets_, label_ + ": sort", quiet_,
                 [&](std::int64_t bucket) { sort_bucket(bucket, indptr); });
  rows_.reset();
  std::inclusive_scan(indptr.begin(), indptr.end(), indptr.begin());
  const edge_t edges = indptr.back();
  npy_array indices_array = writer.create("indices.npy", dtype::int32, {edges});
  copy_buckets(indptr, indices_array.as<vertex_t>());
  sources_.reset();
  return edges;
}

// Counting-sorts the bucket's entries into rows, sorts and de-duplicates each
// row, packs the rows at the start of the bucket's scratch range and stores
// their lengths in indptr[row + 1].
void csr_assembler::sort_bucket(std::int64_t bucket, std::span<edge_t> indptr) {
  const edge_t begin = bucket_begin_[bucket];
  const auto size = static_cast<std::size_t>(bucket_begin_[bucket + 1] - begin);
  const auto sources = sources_->span().subspan(static_cast<std::size_t>(begin), size);
  const auto rows = rows_->span().subspan(static_cast<std::size_t>(begin), size);
  const std::int64_t row_count = bucket_rows(bucket);
  std::vector<edge_t> row_begin(static_cast<std::size_t>(row_count + 1), 0);
  for (const auto row : rows) ++row_begin[row + 1];
  std::partial_sum(row_begin.begin(), row_begin.end(), row_begin.begin());
  std::vector<edge_t> cursor(row_begin.begin(), row_begin.end() - 1);
  std::vector<vertex_t> by_row(size);
  for (std::size_t i = 0; i < size; ++i) by_row[cursor[rows[i]]++] = sources[i];
  auto out = sources.begin();
  for (std::int64_t row = 0; row < row_count; ++row) {
    const auto first = by_row.begin() + row_begin[row];
    const auto last = by_row.begin() + row_begin[row + 1];
    std::sort(first, last);
    const auto kept = std::unique(first, last);
    out = std::copy(first, kept, out);
    indptr[(bucket << row_bits) + row + 1] = kept - first;
  }
}

void csr_assembler::copy_buckets(std::span<const edge_t> indptr, std::span<vertex_t> indices) {
  const auto sources = sources_->span();
  for (std::int64_t first = 0; first < buckets_; first += buckets_per_release) {
    const std::int64_t last = std::min(buckets_, first + buckets_per_release);
    tbb::parallel_for(first, last, [&](std::int64_t bucket) {
      const edge_t from = indptr[bucket << row_bits];
      const edge_t to = indptr[(bucket << row_bits) + bucket_rows(bucket)];
      std::copy_n(sources.begin() + bucket_begin_[bucket], to - from, indices.begin() + from);
    });
    sources_->release_below(static_cast<std::size_t>(bucket_begin_[last]));
  }
}

void write_features(native_writer& writer, std::int64_t nodes, int features, std::uint32_t seed,
                    std::span<const std::int32_t> labels, std::span<const float> class_means,
                    bool quiet) {
  npy_array array = writer.create("features.npy", dtype::float32, {nodes, features});
  const auto values = array.as<float>();
  const auto width = static_cast<std::size_t>(features);
  for_each_chunk(chunks_for(nodes, nodes_per_chunk), "features", quiet, [&](std::int64_t chunk) {
    const std::int64_t end = std::min(nodes, (chunk + 1) * nodes_per_chunk);
    for (std::int64_t node = chunk * nodes_per_chunk; node < end; ++node) {
      const auto row = values.subspan(static_cast<std::size_t>(node) * width, width);
      philox_stream stream(generator_key(seed, purpose::features, node));
      fill_normal(stream, row);
      if (class_means.empty()) continue;
      const auto mean = class_means.subspan(static_cast<std::size_t>(labels[node]) * width, width);
      for (std::size_t i = 0; i < width; ++i) row[i] += mean[i];
    }
  });
}

std::vector<vertex_t> random_permutation(std::int64_t n, std::uint32_t seed, purpose what) {
  std::vector<vertex_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), vertex_t{0});
  philox_stream stream(generator_key(seed, what, 0));
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = stream.uniform_below(static_cast<std::uint32_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

void write_edge_weights(native_writer& writer, std::uint32_t seed, bool quiet) {
  const auto indptr_array = npy_array::open(writer.temporary_dir() / "indptr.npy");
  const auto indices_array = npy_array::open(writer.temporary_dir() / "indices.npy");
  const auto indptr = indptr_array.as<const edge_t>();
  const auto indices = indices_array.as<const vertex_t>();
  const auto nodes = static_cast<std::int64_t>(indptr.size()) - 1;
  npy_array array = writer.create("edge_weight.npy", dtype::float32, {indptr[nodes]});
  const auto weights = array.as<float>();
  for_each_chunk(chunks_for(nodes, nodes_per_chunk), "edge weights", quiet,
                 [&](std::int64_t chunk) {
                   const std::int64_t end = std::min(nodes, (chunk + 1) * nodes_per_chunk);
                   for (std::int64_t v = chunk * nodes_per_chunk; v < end; ++v)
                     for (auto e = indptr[v]; e < indptr[v + 1]; ++e) {
                       const auto u = static_cast<std::int64_t>(indices[e]);
                       rng_key key = generator_key(seed, purpose::edge_weights, std::min(u, v));
                       key.minibatch = static_cast<std::uint32_t>(std::max(u, v));
                       philox_stream stream(key);
                       // 24 random bits, shifted off zero: (0, 1] in steps of 2^-24.
                       weights[e] = static_cast<float>((stream.next_u32() >> 8) + 1) * 0x1p-24F;
                     }
                 });
}

void write_labels(native_writer& writer, std::span<const std::int32_t> labels) {
  npy_array array =
      writer.create("labels.npy", dtype::int32, {static_cast<std::int64_t>(labels.size())});
  std::ranges::copy(labels, array.as<std::int32_t>().begin());
}

nlohmann::json write_random_split(native_writer& writer, std::int64_t nodes, std::uint32_t seed) {
  const auto order = random_permutation(nodes, seed, purpose::split);
  const std::int64_t train = nodes * 3 / 5;
  const std::int64_t valid = nodes / 5;
  const std::int64_t bounds[] = {0, train, train + valid, nodes};
  const char* parts[] = {"train", "valid", "test"};
  for (int part = 0; part < 3; ++part) {
    const std::int64_t size = bounds[part + 1] - bounds[part];
    npy_array array =
        writer.create(fmt::format("split/random/{}.npy", parts[part]), dtype::int32, {size});
    const auto ids = array.as<vertex_t>();
    std::copy_n(order.begin() + bounds[part], size, ids.begin());
    std::sort(ids.begin(), ids.end());
  }
  return nlohmann::json::array({"random"});
}

}  // namespace bulkgnn::data::detail
