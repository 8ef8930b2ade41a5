#include "bulkgnn/data/fingerprint.hpp"

#include "bulkgnn/core/hash.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace bulkgnn::data {

namespace {

constexpr std::size_t sampled_elements = 4096;

template <class T>
std::uint64_t word_of(T value) {
  std::uint64_t word = 0;
  std::memcpy(&word, &value, sizeof(T));
  return word;
}

// The size, then elements at evenly spaced positions and the last one.
template <class T>
void add_sample(digest_hasher& hash, std::span<const T> values) {
  hash.add(values.size());
  if (values.empty()) return;
  const std::size_t stride = std::max<std::size_t>(1, values.size() / sampled_elements);
  for (std::size_t i = 0; i < values.size(); i += stride) hash.add(word_of(values[i]));
  hash.add(word_of(values.back()));
}

void add_text(digest_hasher& hash, std::string_view text) {
  hash.add(text.size());
  for (const char c : text) hash.add(static_cast<unsigned char>(c));
}

}  // namespace

std::string content_fingerprint(const dataset& ds) {
  digest_hasher hash;
  const auto graph = ds.graph();
  hash.add(static_cast<std::uint64_t>(graph.rows));
  hash.add(static_cast<std::uint64_t>(graph.cols));
  add_sample(hash, graph.indptr);
  add_sample(hash, graph.indices);
  add_sample(hash, graph.values);
  const auto features = ds.features();
  hash.add(static_cast<std::uint64_t>(features.rows));
  hash.add(static_cast<std::uint64_t>(features.cols));
  add_sample(hash, features.data);
  hash.add(static_cast<std::uint64_t>(ds.num_classes()));
  add_sample(hash, ds.labels());
  hash.add(ds.splits().size());
  for (const auto& s : ds.splits()) {
    add_text(hash, s.name);
    add_sample(hash, s.train);
    add_sample(hash, s.valid);
    add_sample(hash, s.test);
  }
  return fmt::format("{} vertices, {} edges, {} features, {} classes, content {:016x}",
                     ds.num_nodes(), ds.num_edges(), features.cols, ds.num_classes(), hash.value());
}

}  // namespace bulkgnn::data
