#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn {

// A list of vertex lists stored back to back: segment j is
// vertices[offsets[j] .. offsets[j+1]). The bulk sampler keeps one segment per
// minibatch (its seeds, a layer's frontier, a layer's sources).
struct segmented_vertices {
  buffer<vertex_t> vertices;
  buffer<std::int64_t> offsets{0};

  [[nodiscard]] std::int64_t segments() const {
    return static_cast<std::int64_t>(offsets.size()) - 1;
  }
  [[nodiscard]] std::size_t size_bytes() const {
    return vertices.size_bytes() + offsets.size_bytes();
  }
  [[nodiscard]] std::int64_t size(std::int64_t j) const { return offsets[j + 1] - offsets[j]; }
  [[nodiscard]] std::span<const vertex_t> segment(std::int64_t j) const {
    return std::span<const vertex_t>(vertices).subspan(offsets[j], size(j));
  }
  void push_segment(std::span<const vertex_t> v) {
    vertices.insert(vertices.end(), v.begin(), v.end());
    offsets.push_back(static_cast<std::int64_t>(vertices.size()));
  }
};

}  // namespace bulkgnn
