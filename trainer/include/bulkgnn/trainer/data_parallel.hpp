#pragma once

#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace bulkgnn::trainer {

// The ranks of a data-parallel run, as the trainer sees them (distributed/
// implements this over MPI). Every rank trains on its slice of each global
// minibatch (loader_options::slice) and the gradients, scaled by the slice's
// share of the minibatch's seeds, are summed: one step is the single-process
// step on the whole minibatch, up to the order of float sums.
class data_parallel {
 public:
  virtual ~data_parallel() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int ranks() const = 0;
  // Collective: every rank calls these once per step / per epoch.
  virtual void sum_gradients(std::span<float> gradients) = 0;
  virtual void sum_metrics(std::span<double> metrics) = 0;
  // True on every rank iff every rank passed the same value.
  [[nodiscard]] virtual bool same_on_every_rank(std::uint64_t value) = 0;
  // Where the loader reads rows of A and input features (nullptr: from the
  // dataset in this process).
  [[nodiscard]] virtual sampler::row_source* rows() = 0;
  [[nodiscard]] virtual loader::feature_fetcher* features() = 0;
  // Ends every rank with this message (a stage failed mid-collective).
  [[noreturn]] virtual void abort_all(const std::string& message) = 0;
};

}  // namespace bulkgnn::trainer
