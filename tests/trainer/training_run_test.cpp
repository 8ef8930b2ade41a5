#include "bulkgnn/trainer/training_run.hpp"
#include "bulkgnn/session/layout.hpp"
#include "bulkgnn/session/training.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/trainer/checkpoint.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "scratch_dir.hpp"
#include "small_csbm.hpp"
#include "small_run.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>

namespace bulkgnn::trainer {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;
// train(ds, o): over the loaders the session assembles, as `bulkgnn train` runs.
using session::train;
using testing::bitwise_equal;
using testing::small_options;

// Expects resuming with `o` to be refused with an option_error that names
// the setting `named`; `why` says what was resumed.
template <class Dataset>
void expect_resume_refused(const Dataset& ds, const train_options& o, const std::string& named,
                           const std::string& why) {
  try {
    std::ignore = train(ds, o);
    ADD_FAILURE() << why << " was accepted";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
}

TEST(training_run, graphsage_learns_the_csbm_labels) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  const auto result = train(ds, small_options());
  ASSERT_EQ(result.epochs.size(), 4u);
  EXPECT_LT(result.epochs.back().loss, result.epochs.front().loss);
  ASSERT_TRUE(result.best_epoch.has_value());
  EXPECT_GT(result.best_valid_acc, 0.8);
  EXPECT_GT(result.test_acc_at_best, 0.8);
  EXPECT_GT(result.epochs.back().train_acc, result.epochs.front().train_acc);
}

// The layer is chosen apart from the sampler: sage layers read any block's
// pattern; gcn layers keep the weights LADIES and FastGCN compute.
TEST(training_run, sage_layers_over_ladies_blocks_learn_and_gcn_needs_weighted_blocks) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options("ladies");
  o.epochs = 8;
  EXPECT_EQ(layer_for(o), layer_kind::gcn);  // the sampler's own
  o.layer = layer_kind::sage;
  const auto result = train(ds, o);
  EXPECT_EQ(result.config.at("model"), "sage");
  EXPECT_EQ(result.parameters.size(), gnn_model({.kind = layer_kind::sage,
                                                 .in_features = ds.features().cols,
                                                 .hidden = 32,
                                                 .num_classes = ds.num_classes(),
                                                 .layers = 2},
                                                0)
                                          .parameters()
                                          .size());
  ASSERT_TRUE(result.best_epoch.has_value());
  EXPECT_GT(result.best_valid_acc, 0.6);

  auto pattern = small_options("sage");
  pattern.layer = layer_kind::gcn;
  try {
    std::ignore = train(ds, pattern);
    FAIL() << "gcn layers over node-wise blocks";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("train_options.layer gcn"), std::string::npos) << e.what();
  }
}

TEST(training_run, ladies_with_gcn_layers_learns_too) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options("ladies");
  o.epochs = 8;
  const auto full = train(ds, o);
  EXPECT_EQ(full.config.at("model"), "gcn");
  EXPECT_GT(full.best_valid_acc, 0.75);
  // Sampled evaluation sees what training saw: 128 of ~500 frontier
  // neighbours per layer, so it trails full evaluation but beats chance
  // (0.25) clearly.
  o.eval = evaluation::sampled;
  const auto sampled = train(ds, o);
  EXPECT_GT(sampled.best_valid_acc, 0.5);
}

TEST(training_run, same_seed_gives_identical_weights_for_any_thread_count_and_bulk) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 2;
  std::vector<float> one_thread;
  {
    const thread_limit limit(1);
    one_thread = train(ds, o).parameters;
  }
  o.loading.bulk = 3;
  o.loading.ready_queue = 1;
  const auto two_threads = train(ds, o).parameters;
  EXPECT_TRUE(bitwise_equal(one_thread, two_threads));
}

// The data-parallel path on one rank without MPI: gradients, metrics and the
// final weight check go through the communicator and change nothing.
TEST(training_run, data_parallel_over_one_rank_trains_exactly_as_alone) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 2;
  const auto alone = train(ds, o);
  comm::traffic_log log;
  comm::self_communicator self("gradients", log);
  data_parallel parallel;
  parallel.ranks = &self;
  o.parallel = &parallel;
  const auto over_communicator = train(ds, o);
  EXPECT_TRUE(bitwise_equal(alone.parameters, over_communicator.parameters));
  const auto seeds = static_cast<std::int64_t>(ds.find_split("").train.size());
  const auto steps = (seeds + o.loading.batch_size - 1) / o.loading.batch_size;
  // A gradient sum per step, a metrics sum per epoch, the weight check.
  EXPECT_EQ(log.all().at("gradients").calls, o.epochs * (steps + 1) + 1);
}

// A minibatch source over a loader that records the passes asked of it.
class recording_source final : public loader::minibatch_source {
 public:
  explicit recording_source(loader::minibatch_loader& loader) : loader_(loader) {}
  void start_epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) override {
    epochs.push_back(epoch);
    loader_.start_epoch(seeds, epoch);
  }
  std::optional<loader::ready_minibatch> next() override {
    auto mb = loader_.next();
    if (mb) ++handed_out;
    return mb;
  }
  std::int64_t num_minibatches() const override { return loader_.num_minibatches(); }
  loader::epoch_report report() const override { return loader_.report(); }

  std::vector<std::uint32_t> epochs;
  std::int64_t handed_out = 0;

 private:
  loader::minibatch_loader& loader_;
};

TEST(training_run, trains_from_given_sources_exactly_as_from_the_session_loaders) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 2;
  o.eval = evaluation::sampled;
  const auto own = train(ds, o);

  const loader::graph_source source{ds.graph(), ds.features(), ds.labels()};
  sampler::bulk_sampler sampler(ds.graph(), o.sampling);
  sampler::bulk_sampler eval_sampler(ds.graph(), o.sampling);
  loader::minibatch_loader training(source, sampler, o.loading);
  auto eval_loading = o.loading;
  eval_loading.max_minibatches = 0;
  loader::minibatch_loader evaluation(source, eval_sampler, eval_loading);
  recording_source train_source(training);
  recording_source eval_source(evaluation);
  const auto given = train(ds, o,
                           {.train = train_source,
                            .make_eval = [&]() -> loader::minibatch_source& { return eval_source; },
                            .sampler = &sampler});

  EXPECT_TRUE(bitwise_equal(own.parameters, given.parameters));
  ASSERT_EQ(given.epochs.size(), own.epochs.size());
  for (std::size_t e = 0; e < own.epochs.size(); ++e) {
    EXPECT_EQ(given.epochs[e].loss, own.epochs[e].loss);
    EXPECT_EQ(given.epochs[e].valid_acc, own.epochs[e].valid_acc);
    EXPECT_EQ(given.epochs[e].test_acc, own.epochs[e].test_acc);
    EXPECT_FALSE(given.epochs[e].sampler_stages.empty());
  }
  EXPECT_EQ(train_source.epochs, (std::vector<std::uint32_t>{0, 1}));
  const auto steps = (static_cast<std::int64_t>(ds.find_split("").train.size()) + 63) / 64;
  EXPECT_EQ(train_source.handed_out, o.epochs * steps);
  EXPECT_EQ(eval_source.epochs.size(), 4u);  // valid and test, every epoch
}

TEST(training_run, sampled_evaluation_without_an_evaluation_source_is_refused) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 1;
  o.eval = evaluation::sampled;
  sampler::bulk_sampler sampler(ds.graph(), o.sampling);
  loader::minibatch_loader training({ds.graph(), ds.features(), ds.labels()}, sampler, o.loading);
  EXPECT_THROW(std::ignore = train(ds, o, {.train = training}), option_error);
}

// The seam session::train uses: sources that normalise rows hand the trainer
// their normaliser, which evaluation applies too.
TEST(training_run, given_sources_with_their_normalizer_train_as_the_session_loaders_do) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 2;
  o.normalize_features = loader::feature_normalization::row;
  const auto own = train(ds, o);

  const auto normalizer = feature_normalizer(whole_dataset(ds), o);
  ASSERT_TRUE(normalizer.has_value());
  sampler::bulk_sampler sampler(ds.graph(), o.sampling);
  loader::minibatch_loader training({.graph = ds.graph(),
                                     .features = ds.features(),
                                     .labels = ds.labels(),
                                     .normalizer = &*normalizer},
                                    sampler, o.loading);
  const auto given = train(ds, o, {.train = training, .normalizer = &*normalizer});
  EXPECT_TRUE(bitwise_equal(own.parameters, given.parameters));
  ASSERT_EQ(given.epochs.size(), own.epochs.size());
  for (std::size_t e = 0; e < own.epochs.size(); ++e)
    EXPECT_EQ(given.epochs[e].valid_acc, own.epochs[e].valid_acc) << "epoch " << e;

  o.normalize_features = loader::feature_normalization::none;
  EXPECT_THROW(std::ignore = train(ds, o, {.train = training, .normalizer = &*normalizer}),
               option_error);
}

TEST(training_run, resumed_run_ends_with_bit_identical_weights) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.checkpoint_dir = dir / "uninterrupted";
  const auto uninterrupted = train(ds, o);

  o.checkpoint_dir = dir / "interrupted";
  o.epochs = 2;
  std::ignore = train(ds, o);
  o.epochs = 4;
  o.resume = true;
  const auto resumed = train(ds, o);

  EXPECT_TRUE(bitwise_equal(uninterrupted.parameters, resumed.parameters));
  ASSERT_EQ(resumed.epochs.size(), 4u);
  for (std::size_t e = 0; e < 4; ++e) {
    EXPECT_EQ(resumed.epochs[e].loss, uninterrupted.epochs[e].loss) << "epoch " << e;
    EXPECT_EQ(resumed.epochs[e].valid_acc, uninterrupted.epochs[e].valid_acc) << "epoch " << e;
  }
  EXPECT_EQ(resumed.best_epoch, uninterrupted.best_epoch);
  EXPECT_EQ(resumed.test_acc_at_best, uninterrupted.test_acc_at_best);
}

// A checkpoint saved after the run diverged holds NaN weights under a valid
// CRC: resuming names the file and what it holds, not the loss that follows.
TEST(training_run, resume_refuses_a_checkpoint_with_non_finite_weights) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.checkpoint_dir = dir / "diverged";
  o.epochs = 1;
  std::ignore = train(ds, o);
  auto saved = load_checkpoint(o.checkpoint_dir);
  ASSERT_TRUE(saved.has_value());
  saved->parameters[7] = std::numeric_limits<float>::quiet_NaN();
  save_checkpoint(o.checkpoint_dir, *saved);
  o.epochs = 2;
  o.resume = true;
  try {
    std::ignore = train(ds, o);
    FAIL() << "resumed from NaN weights";
  } catch (const data_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("checkpoint.bin: holds non-finite weights (nan at index 7)"),
        std::string::npos)
        << e.what();
  }
}

TEST(training_run, resume_names_a_directory_where_the_checkpoint_should_be) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.checkpoint_dir = dir / "odd";
  std::filesystem::create_directories(o.checkpoint_dir / "checkpoint.bin");
  o.resume = true;
  try {
    std::ignore = train(ds, o);
    FAIL() << "resumed from a directory";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint.bin: is a directory, not a file"),
              std::string::npos)
        << e.what();
  }
}

TEST(training_run, resume_refuses_a_missing_corrupt_or_foreign_checkpoint) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 1;
  o.checkpoint_dir = dir / "ckpt";
  o.resume = true;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);  // none yet

  o.resume = false;
  std::ignore = train(ds, o);
  o.resume = true;
  o.epochs = 2;

  auto foreign = o;
  foreign.model.hidden = 16;
  expect_resume_refused(ds, foreign, "hidden", "a checkpoint for another model");

  const auto file = checkpoint_path(o.checkpoint_dir);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& content) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
  };
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  write(flipped);
  EXPECT_THROW(std::ignore = train(ds, o), data_error);
  write(bytes.substr(0, bytes.size() / 3));
  EXPECT_THROW(std::ignore = train(ds, o), data_error);
  write("not a checkpoint");
  EXPECT_THROW(std::ignore = train(ds, o), data_error);
  write(bytes);
  auto fewer_epochs = o;
  EXPECT_EQ(train(ds, o).epochs.size(), 2u);
  fewer_epochs.epochs = 1;
  EXPECT_THROW(std::ignore = train(ds, fewer_epochs), option_error);  // 2 done > 1 asked
  auto fresh = o;
  fresh.resume = false;
  EXPECT_THROW(std::ignore = train(ds, fresh), option_error);  // would overwrite
}

TEST(training_run, feature_normalization_is_in_the_fingerprint_and_a_resume_must_match_it) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 1;
  o.eval_every = 0;
  const auto plain = train(ds, o);
  o.normalize_features = loader::feature_normalization::row;
  o.checkpoint_dir = dir / "ckpt";
  const auto normalized = train(ds, o);
  EXPECT_EQ(plain.config.at("normalize_features"), "none");
  EXPECT_EQ(normalized.config.at("normalize_features"), "row");
  EXPECT_NE(plain.parameters, normalized.parameters);  // the inputs differ

  auto other = o;
  other.normalize_features = loader::feature_normalization::none;
  other.resume = true;
  other.epochs = 2;
  expect_resume_refused(ds, other, "normalize_features",
                        "a checkpoint trained on normalised features resumed without");
}

// A sampler's own parameters (walk_length, GraphSAINT's steps and coverage,
// ...) change what it draws: they are in the fingerprint, defaults filled in,
// and a resume must match them; a sampler without any adds nothing.
TEST(training_run, sampler_parameters_are_in_the_fingerprint_and_a_resume_must_match_them) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 1;
  o.eval_every = 0;
  EXPECT_FALSE(train(ds, o).config.contains("sampler_parameters"));
  o.sampling.kind = "random-walk";
  o.checkpoint_dir = dir / "ckpt";
  const auto walked = train(ds, o);
  EXPECT_EQ(walked.config.at("sampler_parameters"), nlohmann::json({{"walk_length", 2}}));
  auto longer = o;
  longer.sampling.parameters["walk_length"] = 3;
  longer.resume = true;
  longer.epochs = 2;
  expect_resume_refused(ds, longer, "sampler_parameters",
                        "a checkpoint of walks of 2 steps resumed with walks of 3");
}

TEST(training_run, float_settings_are_recorded_as_typed) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 1;
  o.eval_every = 0;
  o.optimizer.lr = 0.003f;
  o.model.dropout = 0.1f;
  const auto config = train(ds, o).config;
  EXPECT_EQ(config.at("lr").dump(), "0.003");
  EXPECT_EQ(config.at("dropout").dump(), "0.1");
}

TEST(training_run, checkpoint_round_trips) {
  const scratch_dir dir;
  checkpoint c;
  c.fingerprint = {{"hidden", 4}, {"seed", 1}};
  c.epochs_done = 3;
  c.optimizer_steps = 17;
  c.parameters = {1.5f, -2.0f, 0.25f};
  c.first_moment = {0.1f, 0.2f, 0.3f};
  c.second_moment = {1e-3f, 2e-3f, 3e-3f};
  c.history = nlohmann::json::array({{{"epoch", 0}}});
  save_checkpoint(dir.path(), c);
  const auto back = load_checkpoint(dir.path());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->fingerprint, c.fingerprint);
  EXPECT_EQ(back->epochs_done, 3);
  EXPECT_EQ(back->optimizer_steps, 17);
  EXPECT_EQ(back->parameters, c.parameters);
  EXPECT_EQ(back->first_moment, c.first_moment);
  EXPECT_EQ(back->second_moment, c.second_moment);
  EXPECT_EQ(back->history, c.history);
  EXPECT_FALSE(load_checkpoint(dir / "nothing-here").has_value());
}

TEST(training_run, rejects_impossible_options) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.epochs = 0;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
  o = small_options();
  o.model.layers = 3;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
  o = small_options();
  o.resume = true;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
  o = small_options();
  o.split = "no-such-split";
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
  o = small_options();
  o.optimizer.lr = -1;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
  o = small_options();
  o.eval_piece_rows = -1;
  EXPECT_THROW(std::ignore = train(ds, o), option_error);
}

// Evaluation in pieces is for a GPU model that cannot hold the graph; a host
// model always evaluates the whole graph at once.
TEST(training_run, host_models_evaluate_the_whole_graph_at_once) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options();
  o.eval_piece_rows = 100;
  EXPECT_EQ(session::layout_for(whole_dataset(ds), o).evaluation.route, evaluation_route::whole);
}

}  // namespace
}  // namespace bulkgnn::trainer
