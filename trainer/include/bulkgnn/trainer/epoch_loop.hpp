#pragma once

#include "bulkgnn/comm/communicator.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

// What every training mode's epochs share (minibatch training in
// training_run.cpp, full-batch training in fullbatch/): when to evaluate,
// which epoch is best, and the check that the ranks trained one model.
namespace bulkgnn::trainer {

// The epoch with the best validation accuracy so far (the first of ties) and
// the accuracies it had; no epoch until one is evaluated. A run's result
// derives from it.
struct best_validation {
  std::optional<std::int64_t> best_epoch;
  double best_valid_acc = 0;
  double test_acc_at_best = 0;

  // Takes `epoch` if its validation accuracy beats the best so far.
  void offer(std::int64_t epoch, const std::optional<double>& valid_acc,
             const std::optional<double>& test_acc);
};

// Offers `record`'s epoch to `best` by its validation and test scores: the
// accuracies, or a link record's MRRs where it selects_by_mrr.
template <class Record>
void offer_record(best_validation& best, const Record& record) {
  if constexpr (requires { record.selects_by_mrr; }) {
    if (record.selects_by_mrr) return best.offer(record.epoch, record.valid_mrr, record.test_mrr);
  }
  best.offer(record.epoch, record.valid_acc, record.test_acc);
}

// Whether epoch `epoch` (from 0) of `epochs` is evaluated: every
// `eval_every` epochs and after the last; never with eval_every 0.
[[nodiscard]] bool evaluates_after(std::int64_t epoch, std::int64_t epochs,
                                   std::int64_t eval_every);

// The epoch loop of every training mode. For each epoch in [first, epochs):
// `train(epoch)` trains it and returns its record (with valid_acc and
// test_acc optionals), `evaluate(record)` fills its accuracies when the epoch
// is evaluated, `best` is offered it (offer_record), and `finish(record)`
// keeps it.
template <class Train, class Evaluate, class Finish>
void run_epochs(std::int64_t first, std::int64_t epochs, std::int64_t eval_every,
                best_validation& best, Train&& train, Evaluate&& evaluate, Finish&& finish) {
  for (auto epoch = first; epoch < epochs; ++epoch) {
    auto record = train(epoch);
    if (evaluates_after(epoch, epochs, eval_every)) evaluate(record);
    offer_record(best, record);
    finish(std::move(record));
  }
}

// Ranks that applied the same summed gradients to the same weights end with
// the same weights; otherwise they trained different models. Collective (one
// all-gather of a digest of each rank's `parameters`' bits): every rank
// throws internal_error naming `run` and how many ranks differ from rank 0.
void require_same_weights(comm::communicator& ranks, std::span<const float> parameters,
                          std::string_view run);

}  // namespace bulkgnn::trainer
