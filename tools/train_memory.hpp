#pragma once

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/trainer/training_run.hpp"

namespace bulkgnn::tools {

// A lower estimate of what a training run holds at once, in bytes, from the
// options and the dataset's sizes alone (nothing is allocated).
struct train_memory {
  double model = 0;       // weights, gradients and two Adam moments
  double minibatch = 0;   // one sampled minibatch's activations and gradients
  double evaluation = 0;  // full-graph evaluation's activations (0 unless --eval full)

  [[nodiscard]] double total() const { return model + minibatch + evaluation; }
};

[[nodiscard]] train_memory estimate_train_memory(const trainer::training_data& ds,
                                                 const trainer::train_options& options);

// The memory this process can still use: the kernel's MemAvailable, or less
// under a cgroup limit.
[[nodiscard]] double available_memory_bytes();

// option_error before anything large is allocated when the estimate exceeds
// what is available, naming the options that ask for the largest part.
void require_memory_for(const trainer::training_data& ds, const trainer::train_options& options);

}  // namespace bulkgnn::tools
