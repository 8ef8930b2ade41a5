#include "run_checkpointer.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/trainer/checkpoint.hpp"

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
  if (!j.at("valid_acc").is_null()) r.valid_acc = j.at("valid_acc").get<double>();
  if (!j.at("test_acc").is_null()) r.test_acc = j.at("test_acc").get<double>();
  r.seconds = j.at("seconds").get<double>();
  r.eval_seconds = j.value("eval_seconds", 0.0);
  return r;
}

}  // namespace

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
  c.parameters = state.model.parameters_on_host();
  c.first_moment = state.optimizer.first_moment_on_host();
  c.second_moment = state.optimizer.second_moment_on_host();
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
  const auto parameter_count = state.model.parameters().size();
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
  state.model.set_parameters(c->parameters);
  state.optimizer.set_moments(c->first_moment, c->second_moment);
  state.optimizer.set_steps(c->optimizer_steps);
  if (!c->history.is_array() || c->history.size() != static_cast<std::size_t>(c->epochs_done))
    throw data_error(file.string(), "checkpoint history does not match its epoch count");
  try {
    for (const auto& h : c->history) {
      auto record = epoch_record_from_json(h);
      state.result.offer(record.epoch, record.valid_acc, record.test_acc);
      state.add_record(std::move(record), h);
    }
  } catch (const nlohmann::json::exception& e) {
    throw data_error(file.string(), fmt::format("malformed checkpoint history: {}", e.what()));
  }
  return c->epochs_done;
}

}  // namespace bulkgnn::trainer::detail
