// Node classification on a graph without features: the model learns an input
// row per vertex (train_options.node_embedding), as a PyG model with
// torch.nn.Embedding does.
#include "bulkgnn/session/training.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "scratch_dir.hpp"
#include "small_csbm.hpp"
#include "small_run.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace bulkgnn::trainer {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;
using session::train;
using testing::bitwise_equal;
using testing::small_options;
using testing::without_features;

train_options embedding_options(std::int64_t width) {
  auto o = small_options();
  o.node_embedding = width;
  // A vertex's row learns only from the minibatches that reach it: slower
  // than features, so a higher rate.
  o.optimizer.lr = 0.03f;
  return o;
}

// What train(ds, o) refuses, naming it; "accepted" where it trains.
std::string refusal(const training_data& ds, const train_options& o) {
  try {
    std::ignore = train(ds, o);
    return "accepted";
  } catch (const option_error& e) {
    return e.what();
  }
}

// small_csbm's graph, and its view without the features.
struct featureless_csbm {
  scratch_dir dir;
  data::dataset with_features = small_csbm(dir);
  training_data ds = without_features(with_features);
};

TEST(node_embedding, learned_rows_classify_the_vertices_of_a_graph_without_features) {
  const featureless_csbm f;
  const auto& ds = f.ds;
  auto o = embedding_options(16);
  o.epochs = 12;
  o.model.dropout = 0.0f;
  const auto result = train(ds, o);
  EXPECT_LT(result.epochs.back().loss, result.epochs.front().loss);
  // Four classes: chance is 0.25. Homophilous edges alone carry the class
  // (0.97 here after 12 epochs).
  EXPECT_GT(result.best_valid_acc, 0.8);
  EXPECT_GT(result.test_acc_at_best, 0.8);
  EXPECT_EQ(result.config.at("node_embedding"), 16);
  EXPECT_EQ(result.config.at("in_features"), 16);
  EXPECT_GT(result.parameters.size(), static_cast<std::size_t>(ds.num_nodes * 16));

  // Sampled evaluation reads the same table through the minibatches' ids.
  o.eval = evaluation::sampled;
  const auto sampled = train(ds, o);
  EXPECT_TRUE(bitwise_equal(result.parameters, sampled.parameters))
      << "evaluation changes no weight";
  EXPECT_NEAR(sampled.best_valid_acc, result.best_valid_acc, 0.1);
}

TEST(node_embedding, trains_alike_for_any_thread_count_bulk_communicator_and_resume) {
  const featureless_csbm f;
  const auto& ds = f.ds;
  auto o = embedding_options(8);
  o.epochs = 2;
  train_result one_thread;
  {
    const thread_limit limit(1);
    one_thread = train(ds, o);
  }
  o.loading.bulk = 1;
  o.loading.ready_queue = 1;
  EXPECT_TRUE(bitwise_equal(one_thread.parameters, train(ds, o).parameters));

  // Over a communicator of one rank: the gradients (the table's too) go
  // through it and change nothing. (One rank evaluates the whole graph; the
  // evaluation by shares, over ranks, is mpi_cli_test's.)
  comm::traffic_log log;
  comm::self_communicator self("gradients", log);
  data_parallel parallel;
  parallel.ranks = &self;
  o.parallel = &parallel;
  const auto over_communicator = train(ds, o);
  EXPECT_TRUE(bitwise_equal(one_thread.parameters, over_communicator.parameters));
  EXPECT_EQ(over_communicator.best_valid_acc, one_thread.best_valid_acc);
  o.parallel = nullptr;

  o.checkpoint_dir = f.dir / "interrupted";
  o.epochs = 1;
  std::ignore = train(ds, o);
  o.epochs = 2;
  o.resume = true;
  EXPECT_TRUE(bitwise_equal(one_thread.parameters, train(ds, o).parameters));
  // Another width is another run.
  o.node_embedding = 4;
  EXPECT_NE(refusal(ds, o).find("node_embedding"), std::string::npos);
}

TEST(node_embedding, is_refused_where_it_would_mean_nothing) {
  const featureless_csbm f;
  const auto& ds = f.ds;
  auto o = small_options();
  o.epochs = 1;
  EXPECT_NE(refusal(ds, o).find("learn an embedding per vertex instead: "
                                "train_options.node_embedding"),
            std::string::npos)
      << "a graph without features names the option that trains on it";
  o.node_embedding = 8;
  EXPECT_NE(refusal(whole_dataset(f.with_features), o).find("has 16 node features"),
            std::string::npos);
  o.normalize_features = loader::feature_normalization::row;
  EXPECT_NE(refusal(ds, o).find("train_options.normalize_features: a learned embedding"),
            std::string::npos);
  o.normalize_features = loader::feature_normalization::none;
  auto part = ds;
  part.whole = false;
  EXPECT_NE(refusal(part, o).find("is a part of a partitioned dataset"), std::string::npos);
  o.node_embedding = 65537;
  EXPECT_NE(refusal(ds, o).find("train_options.node_embedding must be in"), std::string::npos);
}

}  // namespace
}  // namespace bulkgnn::trainer
