#include "run_checkpointer.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/trainer/checkpoint.hpp"
#include "run_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>
#include <utility>

namespace bulkgnn::trainer::detail {

namespace {

// An epoch as its checkpoint history entry holds it (epoch_record::to_json).
epoch_record epoch_record_from_json(const nlohmann::json& j) {
  epoch_record r;
  r.epoch = j.at("epoch").get<std::int64_t>() - 1;  // counted from 1, as to_json writes
  r.loss = j.at("loss").get<double>();
  r.train_acc = j.at("train_acc").get<double>();
  const auto optional_value = [&](const std::string& key, std::optional<double>& value) {
    if (!j.at(key).is_null()) value = j.at(key).get<double>();
  };
  if (j.contains("hits_k")) {  // link prediction: Hits@K where node tasks keep accuracy
    r.hits_k = j.at("hits_k").get<std::int64_t>();
    optional_value(fmt::format("valid_hits@{}", *r.hits_k), r.valid_acc);
    optional_value(fmt::format("test_hits@{}", *r.hits_k), r.test_acc);
    optional_value("valid_mrr", r.valid_mrr);
    optional_value("test_mrr", r.test_mrr);
    r.selects_by_mrr = j.value("selected_by", "") == "mrr";
  } else {
    optional_value("valid_acc", r.valid_acc);
    optional_value("test_acc", r.test_acc);
  }
  r.seconds = j.at("seconds").get<double>();
  r.eval_seconds = j.value("eval_seconds", 0.0);
  return r;
}

// `model` then `head` (if any) in one vector.
std::vector<float> joined(std::vector<float> model, const std::optional<std::vector<float>>& head) {
  if (head) model.insert(model.end(), head->begin(), head->end());
  return model;
}

}  // namespace

std::vector<float> training_state::parameters_on_host() const {
  return joined(model.parameters_on_host(),
                head ? std::optional(head->parameters_on_host()) : std::nullopt);
}

std::vector<float> training_state::first_moment_on_host() const {
  return joined(optimizer.first_moment_on_host(),
                head ? std::optional(head_optimizer->first_moment_on_host()) : std::nullopt);
}

std::vector<float> training_state::second_moment_on_host() const {
  return joined(optimizer.second_moment_on_host(),
                head ? std::optional(head_optimizer->second_moment_on_host()) : std::nullopt);
}

void training_state::zero_gradients() {
  kernels::fill(model.exec(), model.mutable_gradients(), 0.0f);
  if (head) kernels::fill(model.exec(), head->mutable_gradients(), 0.0f);
}

void training_state::all_reduce_gradients(const data_parallel& parallel) {
  detail::all_reduce_gradients(parallel, model.exec(), model.mutable_gradients());
  if (head) detail::all_reduce_gradients(parallel, model.exec(), head->mutable_gradients());
}

std::size_t training_state::parameter_count() const {
  return model.parameters().size() + (head ? head->parameters().size() : 0);
}

void training_state::restore(std::span<const float> parameters, std::span<const float> first,
                             std::span<const float> second, std::int64_t steps) {
  const auto in_model = model.parameters().size();
  model.set_parameters(parameters.first(in_model));
  optimizer.set_moments(first.first(in_model), second.first(in_model));
  optimizer.set_steps(steps);
  if (!head) return;
  head->set_parameters(parameters.subspan(in_model));
  head_optimizer->set_moments(first.subspan(in_model), second.subspan(in_model));
  head_optimizer->set_steps(steps);
}

void run_checkpointer::check_fresh() const {
  if (!options_.checkpoint_dir.empty() && !options_.resume &&
      std::filesystem::exists(checkpoint_path(options_.checkpoint_dir)))
    throw option_error(
        fmt::format("train_options.checkpoint_dir: {} already holds a checkpoint; pass "
                    "train_options.resume to continue it, or "
                    "remove it to start afresh",
                    checkpoint_path(options_.checkpoint_dir).string()));
}

void run_checkpointer::save(const training_state& state, std::int64_t epochs_done) const {
  checkpoint c;
  c.fingerprint = state.result.config;
  c.epochs_done = epochs_done;
  c.optimizer_steps = state.optimizer.steps();
  c.parameters = state.parameters_on_host();
  c.first_moment = state.first_moment_on_host();
  c.second_moment = state.second_moment_on_host();
  c.history = state.history;
  save_checkpoint(options_.checkpoint_dir, c);
}

std::int64_t run_checkpointer::restore(training_state& state) const {
  const auto file = checkpoint_path(options_.checkpoint_dir);
  auto c = load_checkpoint(options_.checkpoint_dir);
  if (!c)
    throw option_error(fmt::format("train_options.resume: no checkpoint at {}", file.string()));
  check_fingerprint(c->fingerprint, state.result.config, file);
  if (c->epochs_done <= 0 || c->epochs_done > options_.epochs)
    throw option_error(
        fmt::format("train_options.resume: {} holds {} trained epochs; train_options.epochs must "
                    "be at least that (it is {})",
                    file.string(), c->epochs_done, options_.epochs));
  const auto parameter_count = state.parameter_count();
  if (c->parameters.size() != parameter_count)
    throw data_error(file.string(), fmt::format("holds {} parameters, the model has {}",
                                                c->parameters.size(), parameter_count));
  // A run would fail at its first step with "the loss is nan"; the file is
  // what is wrong.
  for (const auto& [name, values] :
       {std::pair{"weights", std::span<const float>(c->parameters)},
        std::pair{"Adam moments", std::span<const float>(c->first_moment)},
        std::pair{"Adam moments", std::span<const float>(c->second_moment)}}) {
    const auto bad =
        std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
    if (bad != values.end())
      throw data_error(file.string(),
                       fmt::format("holds non-finite {} ({} at index {}): the run that saved it "
                                   "had diverged; train afresh or from an earlier checkpoint",
                                   name, *bad, bad - values.begin()));
  }
  if (c->first_moment.size() != parameter_count || c->second_moment.size() != parameter_count)
    throw data_error(file.string(),
                     fmt::format("holds {} and {} Adam moments for {} parameters",
                                 c->first_moment.size(), c->second_moment.size(), parameter_count));
  state.restore(c->parameters, c->first_moment, c->second_moment, c->optimizer_steps);
  if (!c->history.is_array() || c->history.size() != static_cast<std::size_t>(c->epochs_done))
    throw data_error(file.string(), "checkpoint history does not match its epoch count");
  try {
    for (const auto& h : c->history) {
      auto record = epoch_record_from_json(h);
      offer_record(state.result, record);
      state.add_record(std::move(record), h);
    }
  } catch (const nlohmann::json::exception& e) {
    throw data_error(file.string(), fmt::format("malformed checkpoint history: {}", e.what()));
  }
  return c->epochs_done;
}

void run_with_checkpoints(training_state& state, const train_options& o,
                          const std::function<epoch_record(std::int64_t)>& train,
                          const std::function<void(epoch_record&)>& evaluate,
                          const epoch_callback& on_epoch) {
  const run_checkpointer checkpointer(o);
  checkpointer.check_fresh();
  std::int64_t first_epoch = 0;
  if (o.resume) first_epoch = checkpointer.restore(state);
  const bool rank_zero = o.parallel == nullptr || o.parallel->ranks->rank() == 0;
  run_epochs(first_epoch, o.epochs, o.eval_every, state.result, train, evaluate,
             [&](epoch_record record) {
               const auto epoch = record.epoch;
               state.add_record(std::move(record));
               ++state.result.epochs_this_run;
               if (!o.checkpoint_dir.empty() && rank_zero) checkpointer.save(state, epoch + 1);
               if (on_epoch) on_epoch(state.result.epochs.back(), state.result);
             });
  state.result.parameters = state.parameters_on_host();
  if (o.parallel != nullptr)
    require_same_weights(*o.parallel->ranks, state.result.parameters, "data-parallel training");
}

}  // namespace bulkgnn::trainer::detail
