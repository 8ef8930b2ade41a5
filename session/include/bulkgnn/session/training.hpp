#pragma once

#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/link_split.hpp"
#include "bulkgnn/sampler/link_seeds.hpp"
#include "bulkgnn/session/session.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"
#include "bulkgnn/trainer/link_training.hpp"
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

// How a link-prediction run draws its training minibatches and scores.
struct link_training_plan {
  sampler::negative_sampling negatives;  // the training negatives
  sampler::edge_exclusion exclude = sampler::edge_exclusion::reverse;
  trainer::link_train_options scoring;
};

// Link prediction on `ds` over `split` (data::random_link_split of its
// graph): link minibatches over the split's training edges, their blocks
// sampled from its training graph alone (the held-out edges never pass a
// message in training), valid scored over the training graph and test over
// the training and valid edges, as PyG's RandomLinkSplit has it. Over
// options.parallel's ranks (every one holding the whole dataset and the same
// split), each loads its slice of every minibatch; only their ranks and
// abort_all are used. On the host so far (trainer::train_links refuses a GPU).
[[nodiscard]] trainer::train_result train_links(const trainer::training_data& ds,
                                                const data::link_split& split,
                                                const trainer::train_options& options,
                                                const link_training_plan& plan,
                                                const trainer::epoch_callback& on_epoch = {});

}  // namespace bulkgnn::session
