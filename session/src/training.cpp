#include "bulkgnn/session/training.hpp"

#include "minibatch_loaders.hpp"

namespace bulkgnn::session {

training_ranks::training_ranks(run_session& cluster, const executor& model) {
  auto* shared = cluster.data_parallel();
  if (shared == nullptr) return;
  parallel_ = *shared;
  if (comm::every_rank_owns_a_gpu(*parallel_->ranks, model) && comm::nccl_compiled()) {
    nccl_ = comm::make_nccl_communicator(*parallel_->ranks, model);
    parallel_->device_gradients = nccl_.get();
  }
}

trainer::train_result train(const trainer::training_data& ds, const trainer::train_options& options,
                            const trainer::epoch_callback& on_epoch) {
  trainer::check_trainable(ds, options);
  const auto normalizer = trainer::feature_normalizer(ds, options);
  detail::minibatch_loaders loaders(ds, options, normalizer ? &*normalizer : nullptr);
  return trainer::train(ds, options, loaders.sources(), on_epoch);
}

trainer::train_result train(const data::dataset& ds, const trainer::train_options& options,
                            const trainer::epoch_callback& on_epoch) {
  return train(trainer::whole_dataset(ds), options, on_epoch);
}

}  // namespace bulkgnn::session
