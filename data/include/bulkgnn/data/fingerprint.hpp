#pragma once

#include "bulkgnn/data/dataset.hpp"

#include <string>

namespace bulkgnn::data {

// A fingerprint of a dataset's content that costs about the same on a
// 100 GB dataset as on cora, for ranks of a run to check that they opened
// the same data: the shapes (vertices, edges, feature width, classes, each
// split's name and sizes) and a hash of a bounded sample of every array, its
// last element and up to 4096 evenly spaced ones. The arrays are
// memory-mapped, so this touches a few thousand pages of each, never whole
// files. Equal fingerprints mean equal shapes and equal sampled elements; a
// difference elsewhere goes unnoticed. The text reads
// "2708 vertices, 10556 edges, 1433 features, 7 classes, content 0123456789abcdef".
[[nodiscard]] std::string content_fingerprint(const dataset& ds);

}  // namespace bulkgnn::data
