#pragma once

#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/session/session.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <memory>
#include <optional>

// A minibatch training run assembled for this rank: the data-parallel ranks,
// the multistage loaders over the dataset, and the trainer over them. The
// trainer itself only loops over the minibatch sources it is given.
namespace bulkgnn::session {

// The data-parallel ranks of `cluster` for a model on `model`: its
// gradients summed over NCCL, on the GPUs, when every rank owns a GPU and
// the build has NCCL, else over MPI through host memory. Collective.
class training_ranks {
 public:
  training_ranks(run_session& cluster, const executor& model);

  // nullptr for a process alone.
  [[nodiscard]] trainer::data_parallel* parallel() { return parallel_ ? &*parallel_ : nullptr; }

 private:
  std::optional<trainer::data_parallel> parallel_;
  std::unique_ptr<comm::device_communicator> nccl_;
};

// Trains on `ds` with minibatches from the multistage loaders assembled
// here, on options.exec (sampling and gathering) and options.model_exec
// (training; session::executors_for gives both), over options.parallel's
// ranks if set: each rank loads its slice of every minibatch.
[[nodiscard]] trainer::train_result train(const trainer::training_data& ds,
                                          const trainer::train_options& options,
                                          const trainer::epoch_callback& on_epoch = {});
[[nodiscard]] trainer::train_result train(const data::dataset& ds,
                                          const trainer::train_options& options,
                                          const trainer::epoch_callback& on_epoch = {});

}  // namespace bulkgnn::session
