#pragma once

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/distributed/cost_model.hpp"
#include "bulkgnn/trainer/training_run.hpp"

namespace bulkgnn::tools {

// What a training run holds at once (the cost model's training_memory_of;
// nothing is allocated).
[[nodiscard]] distributed::cost::training_memory estimate_train_memory(
    const trainer::training_data& ds, const trainer::train_options& options);

// option_error when a learned embedding of `width` per vertex of `ds`, with
// its gradient and Adam's two moments, exceeds the memory available where
// `model` keeps it: the host's, or its GPU's (every rank holds the whole
// table).
void require_memory_for_embedding(const trainer::training_data& ds, std::int64_t width,
                                  const executor& model);

// option_error before anything large is allocated when the estimate exceeds
// what is available, naming the options that ask for the largest part.
void require_memory_for(const trainer::training_data& ds, const trainer::train_options& options);

}  // namespace bulkgnn::tools
