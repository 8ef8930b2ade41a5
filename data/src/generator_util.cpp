#include "generator_util.hpp"

#include "bulkgnn/core/error.hpp"
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
// Rows per parallel task when sorting and copying rows.
constexpr std::int64_t rows_per_chunk = std::int64_t{1} << 14;
// Rows copied out before the scratch below them is given back.
constexpr std::int64_t rows_per_release = std::int64_t{1} << 20;
constexpr std::int64_t nodes_per_chunk = 4096;

template <class Body>
void parallel_rows(std::int64_t begin, std::int64_t end, Body&& body) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(begin, end, rows_per_chunk),
                    [&](const tbb::blocked_range<std::int64_t>& range) {
                      for (std::int64_t row = range.begin(); row != range.end(); ++row) body(row);
                    });
}

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
  progress bar(label, chunks, " chunks", quiet);
  for (std::int64_t begin = 0; begin < chunks; begin += chunks_per_wave) {
    const std::int64_t end = std::min(chunks, begin + chunks_per_wave);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(begin, end, 1),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t chunk = range.begin(); chunk != range.end(); ++chunk)
                          body(chunk);
                      });
    bar.update(end);
  }
  bar.finish();
}

scratch_indices::scratch_indices(std::size_t count)
    : count_(count), bytes_(std::max<std::size_t>(count * sizeof(vertex_t), 1)) {
  void* memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    throw error(fmt::format("cannot reserve {} bytes for edge placement: {}", bytes_,
                            std::strerror(errno)));
  // Edges land at random rows: huge pages save most of the TLB misses.
  madvise(memory, bytes_, MADV_HUGEPAGE);
  data_ = static_cast<vertex_t*>(memory);
}

scratch_indices::~scratch_indices() { munmap(data_, bytes_); }

void scratch_indices::release_below(std::size_t end) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = std::min(end * sizeof(vertex_t), bytes_) / page * page;
  if (bytes > 0) madvise(data_, bytes, MADV_DONTNEED);
}

csr_assembler::csr_assembler(std::int64_t nodes, bool symmetric, std::string label, bool quiet)
    : nodes_(nodes),
      symmetric_(symmetric),
      label_(std::move(label)),
      quiet_(quiet),
      cursor_(static_cast<std::size_t>(nodes), 0) {}

void csr_assembler::start_placing() {
  edge_t total = 0;
  for (auto& entry : cursor_) total += std::exchange(entry, total);
  scratch_ = std::make_unique<scratch_indices>(static_cast<std::size_t>(total));
}

edge_t csr_assembler::finish(native_writer& writer) {
  npy_array indptr_array = writer.create("indptr.npy", dtype::int64, {nodes_ + 1});
  const auto indptr = indptr_array.as<edge_t>();
  sort_rows(indptr);
  std::inclusive_scan(indptr.begin(), indptr.end(), indptr.begin());
  const edge_t edges = indptr.back();
  npy_array indices_array = writer.create("indices.npy", dtype::int32, {edges});
  copy_rows(indptr, indices_array.as<vertex_t>());
  scratch_.reset();
  std::vector<edge_t>().swap(cursor_);
  return edges;
}

// Leaves each row's distinct sources sorted at the front of its scratch range
// and their number in new_indptr[row + 1].
void csr_assembler::sort_rows(std::span<edge_t> new_indptr) {
  const auto scratch = scratch_->span();
  new_indptr[0] = 0;
  for_each_chunk(chunks_for(nodes_, rows_per_chunk), label_ + ": sort", quiet_,
                 [&](std::int64_t chunk) {
                   const std::int64_t end = std::min(nodes_, (chunk + 1) * rows_per_chunk);
                   for (std::int64_t row = chunk * rows_per_chunk; row < end; ++row) {
                     const auto first = scratch.begin() + row_begin(row);
                     const auto last = scratch.begin() + cursor_[row];
                     std::sort(first, last);
                     new_indptr[row + 1] = std::unique(first, last) - first;
                   }
                 });
}

void csr_assembler::copy_rows(std::span<const edge_t> new_indptr, std::span<vertex_t> indices) {
  const auto scratch = scratch_->span();
  for (std::int64_t begin = 0; begin < nodes_; begin += rows_per_release) {
    const std::int64_t end = std::min(nodes_, begin + rows_per_release);
    parallel_rows(begin, end, [&](std::int64_t row) {
      std::copy_n(scratch.begin() + row_begin(row), new_indptr[row + 1] - new_indptr[row],
                  indices.begin() + new_indptr[row]);
    });
    scratch_->release_below(static_cast<std::size_t>(cursor_[end - 1]));
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
