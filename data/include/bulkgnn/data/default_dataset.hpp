#pragma once

#include "bulkgnn/data/dataset.hpp"

namespace bulkgnn::data {

// The embedded default dataset that every front end uses when given no data:
// a contextual SBM of 100,000 vertices, 8 classes and 64 features whose
// labels a GNN can learn, generated in memory (no download). It is written to
// a staging directory under TMPDIR, mapped, and the directory removed before
// this returns. `quiet` silences the generator's progress display.
[[nodiscard]] dataset open_default_dataset(bool quiet);

}  // namespace bulkgnn::data
