#pragma once

// What the trainer's run tests share: the small training run (2 layers of
// 32, fanouts 5,5 (node-wise) or 128,128 (layer-wise), batches of 64, 4
// epochs, on small_csbm's graph), a dataset's view without its features, and
// bitwise equality of weights.
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::trainer::testing {

inline train_options small_options(const std::string& kind = "sage") {
  train_options o;
  o.sampling = {.kind = kind,
                .fanouts = kind == "sage" ? std::vector<std::int64_t>{5, 5}
                                          : std::vector<std::int64_t>{128, 128},
                .seed = 5};
  o.loading = {.batch_size = 64, .bulk = 4, .bulk_queue = 2, .ready_queue = 4};
  // Exact GEMMs: the cuda tests compare these runs with the cpu's bit for bit.
  o.model = {.hidden = 32, .layers = 2, .dropout = 0.3f, .gemm = kernels::gemm_mode::exact};
  o.optimizer = {.lr = 0.01f};
  o.epochs = 4;
  o.quiet = true;
  return o;
}

// `ds` without its features: on small_csbm's graph only the edges tell the
// classes apart. The views are `ds`'s, which must outlive them.
inline training_data without_features(const data::dataset& ds) {
  auto data = whole_dataset(ds);
  data.features = {};
  data.feature_dim = 0;
  return data;
}

// Equal bit for bit (what "the same training" means in the run tests).
inline bool bitwise_equal(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace bulkgnn::trainer::testing
