#pragma once

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/generators.hpp"
#include "scratch_dir.hpp"

#include <cstdint>

namespace bulkgnn::testing {

// A small learnable graph in `dir`: CSBM, 4 classes, 16 features whose class
// signal is weak enough that the graph helps (at 1500 vertices a few epochs
// of GraphSAGE reach ~0.9).
inline data::dataset small_csbm(const scratch_dir& dir, std::int64_t nodes = 1500) {
  const auto path = dir / "csbm";
  data::generate_csbm(path, {.nodes = nodes,
                             .classes = 4,
                             .average_degree = 8,
                             .homophily = 0.8,
                             .features = 16,
                             .signal = 1.0,
                             .seed = 3,
                             .quiet = true});
  return data::dataset::open_native(path);
}

}  // namespace bulkgnn::testing
