#pragma once

#include <cstdint>

namespace bulkgnn {

// Vertex ids are 32-bit so that topology costs about 4 bytes per edge; edge
// offsets are 64-bit so graphs may hold billions of edges.
using vertex_t = std::int32_t;
using edge_t = std::int64_t;

}  // namespace bulkgnn
