#include "bulkgnn/trainer/link_training.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/data/link_split.hpp"
#include "bulkgnn/session/training.hpp"
#include "bulkgnn/trainer/checkpoint.hpp"
#include "scratch_dir.hpp"
#include "small_csbm.hpp"
#include "small_run.hpp"

#include <gtest/gtest.h>

namespace bulkgnn::trainer {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;
using testing::bitwise_equal;
using testing::small_options;
using testing::without_features;

// The small run's settings with a few link minibatches per epoch.
train_options link_options() {
  auto o = small_options();
  o.loading.batch_size = 128;
  o.loading.max_minibatches = 6;
  o.epochs = 3;
  return o;
}

session::link_training_plan plan_with(link_head_kind head) {
  session::link_training_plan plan;
  plan.scoring = {.head = head, .hits_k = 20, .ranking_negatives = 20};
  return plan;
}

struct link_fixture {
  scratch_dir dir;
  data::dataset ds = small_csbm(dir);
  data::link_split split = data::random_link_split(ds.graph(), {.seed = 3});
};

TEST(link_training, both_heads_learn_to_rank_the_held_out_links_of_a_csbm) {
  const link_fixture f;
  for (const auto head : {link_head_kind::dot, link_head_kind::mlp}) {
    auto o = link_options();
    o.epochs = 6;
    o.loading.max_minibatches = 0;
    const auto result = session::train_links(whole_dataset(f.ds), f.split, o, plan_with(head));
    ASSERT_EQ(result.epochs.size(), 6u);
    const auto& first = result.epochs.front();
    const auto& last = result.epochs.back();
    EXPECT_LT(last.loss, first.loss) << link_head_name(head);
    ASSERT_TRUE(last.valid_mrr && last.test_mrr && last.valid_acc && last.test_acc);
    // Ranked at random among 20 tails, a positive's expected reciprocal rank
    // is H(21)/21 ≈ 0.17. Edges of this CSBM join vertices of one class 80%
    // of the time, a quarter of the tails are of the positive's class, and
    // features tell the class apart: the heads reach about 0.33.
    EXPECT_GT(*last.valid_mrr, 0.26) << link_head_name(head);
    EXPECT_GT(*last.test_mrr, 0.26) << link_head_name(head);
    EXPECT_EQ(last.hits_k, 20);
    ASSERT_TRUE(result.best_epoch.has_value());
    EXPECT_EQ(result.config.at("task"), "link");
    EXPECT_EQ(result.config.at("link_head"), link_head_name(head));
  }
}

TEST(link_training, same_seed_gives_identical_weights_for_any_thread_count_and_bulk) {
  const link_fixture f;
  auto o = link_options();
  o.epochs = 2;
  const auto plan = plan_with(link_head_kind::mlp);
  std::vector<float> one_thread;
  {
    const thread_limit limit(1);
    one_thread = session::train_links(whole_dataset(f.ds), f.split, o, plan).parameters;
  }
  o.loading.bulk = 1;
  o.loading.ready_queue = 1;
  const auto two_threads = session::train_links(whole_dataset(f.ds), f.split, o, plan);
  EXPECT_TRUE(bitwise_equal(one_thread, two_threads.parameters));
  // The model's parameters, then the MLP head's (h×h + h + h + 1).
  const auto hidden = static_cast<std::size_t>(o.model.hidden);
  EXPECT_GT(two_threads.parameters.size(), hidden * hidden + 2 * hidden + 1);
}

TEST(link_training, resumed_run_ends_with_bit_identical_weights_and_metrics) {
  const link_fixture f;
  const auto plan = plan_with(link_head_kind::mlp);
  auto o = link_options();
  o.epochs = 3;
  o.checkpoint_dir = f.dir / "uninterrupted";
  const auto uninterrupted = session::train_links(whole_dataset(f.ds), f.split, o, plan);

  o.checkpoint_dir = f.dir / "interrupted";
  o.epochs = 1;
  std::ignore = session::train_links(whole_dataset(f.ds), f.split, o, plan);
  o.epochs = 3;
  o.resume = true;
  const auto resumed = session::train_links(whole_dataset(f.ds), f.split, o, plan);

  EXPECT_TRUE(bitwise_equal(uninterrupted.parameters, resumed.parameters));
  ASSERT_EQ(resumed.epochs.size(), 3u);
  for (std::size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(resumed.epochs[e].loss, uninterrupted.epochs[e].loss) << "epoch " << e;
    EXPECT_EQ(resumed.epochs[e].valid_mrr, uninterrupted.epochs[e].valid_mrr) << "epoch " << e;
    EXPECT_EQ(resumed.epochs[e].hits_k, uninterrupted.epochs[e].hits_k) << "epoch " << e;
  }
  EXPECT_EQ(resumed.best_epoch, uninterrupted.best_epoch);

  // Another head is another run: its checkpoint is not resumed.
  auto dot = plan_with(link_head_kind::dot);
  EXPECT_THROW(std::ignore = session::train_links(whole_dataset(f.ds), f.split, o, dot),
               option_error);
}

TEST(link_training, a_node_checkpoint_is_not_resumed_as_a_link_run) {
  const link_fixture f;
  auto o = link_options();
  o.epochs = 1;
  o.checkpoint_dir = f.dir / "run";
  std::ignore = session::train(f.ds, o);
  o.epochs = 2;
  o.resume = true;
  EXPECT_THROW(std::ignore = session::train_links(whole_dataset(f.ds), f.split, o,
                                                  plan_with(link_head_kind::dot)),
               option_error);
}

TEST(link_training, impossible_options_are_refused_naming_them) {
  const link_fixture f;
  const auto expect_refusal = [&](const train_options& o, const session::link_training_plan& p,
                                  const std::string& named) {
    try {
      std::ignore = session::train_links(whole_dataset(f.ds), f.split, o, p);
      ADD_FAILURE() << "accepted; expected a refusal naming " << named;
    } catch (const option_error& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  };
  auto plan = plan_with(link_head_kind::dot);
  plan.scoring.hits_k = 0;
  expect_refusal(link_options(), plan, "link_train_options.hits_k");
  plan = plan_with(link_head_kind::dot);
  plan.scoring.ranking_negatives = 0;
  expect_refusal(link_options(), plan, "link_train_options.ranking_negatives");
  auto o = link_options();
  o.eval = evaluation::sampled;
  expect_refusal(o, plan_with(link_head_kind::dot), "train_options.eval");
}

// With each held-out positive's own negative targets (ogbl-citation2's) and
// no pool, MRR and Hits@K rank against those targets. Targets equal to the
// positive's own target score exactly as the positive does, whatever the
// model: every positive ties its K = 4 targets, ranks 1 + 4/2 = 3 (OGB's
// tie split), so MRR is 1/3 and Hits@K is 1 for K >= 3 and 0 below.
TEST(link_training, stored_negative_targets_are_what_mrr_and_hits_rank_against) {
  link_fixture f;
  for (auto* part : {&f.split.valid, &f.split.test}) {
    auto& targets =
        part == &f.split.valid ? f.split.valid_negative_targets : f.split.test_negative_targets;
    targets.per_positive = 4;
    for (const vertex_t t : part->target) targets.targets.insert(targets.targets.end(), 4, t);
  }
  f.split.valid_negatives = {};
  f.split.test_negatives = {};
  auto o = link_options();
  o.epochs = 1;
  for (const std::int64_t k : {2, 3}) {
    auto plan = plan_with(link_head_kind::dot);
    plan.scoring.hits_k = k;
    const auto result = session::train_links(whole_dataset(f.ds), f.split, o, plan);
    const auto& r = result.epochs.front();
    ASSERT_TRUE(r.valid_mrr && r.test_mrr && r.valid_acc && r.test_acc);
    EXPECT_NEAR(*r.valid_mrr, 1.0 / 3.0, 1e-12);
    EXPECT_NEAR(*r.test_mrr, 1.0 / 3.0, 1e-12);
    EXPECT_EQ(*r.valid_acc, k >= 3 ? 1.0 : 0.0) << "hits@" << k;
    EXPECT_EQ(*r.test_acc, k >= 3 ? 1.0 : 0.0) << "hits@" << k;
  }
  const auto refusal = [&](const data::link_split& split, std::int64_t k) {
    auto plan = plan_with(link_head_kind::dot);
    plan.scoring.hits_k = k;
    try {
      std::ignore = session::train_links(whole_dataset(f.ds), split, o, plan);
      return std::string("accepted");
    } catch (const option_error& e) {
      return std::string(e.what());
    }
  };
  // Hits@5 among 4 targets: every positive ranks at most 5, a hit.
  EXPECT_NE(refusal(f.split, 5).find("its own 4 negative targets, fewer than K"),
            std::string::npos);
  auto short_one = f.split;
  short_one.valid_negative_targets.targets.pop_back();
  EXPECT_NE(refusal(short_one, 3).find("negative targets are not 4 for each"), std::string::npos);
}

TEST(link_training, the_valid_mrr_picks_the_best_epoch_when_asked) {
  const link_fixture f;
  auto o = link_options();
  o.epochs = 4;
  auto plan = plan_with(link_head_kind::dot);
  plan.scoring.select_by_mrr = true;
  const auto result = session::train_links(whole_dataset(f.ds), f.split, o, plan);
  ASSERT_TRUE(result.best_epoch.has_value());
  std::size_t best = 0;
  for (std::size_t e = 1; e < result.epochs.size(); ++e)
    if (*result.epochs[e].valid_mrr > *result.epochs[best].valid_mrr) best = e;
  EXPECT_EQ(*result.best_epoch, static_cast<std::int64_t>(best));
  EXPECT_EQ(result.best_valid_acc, *result.epochs[best].valid_mrr);
  EXPECT_EQ(result.test_acc_at_best, *result.epochs[best].test_mrr);
  EXPECT_EQ(result.config.at("select_by"), "mrr");
  EXPECT_TRUE(result.epochs[best].to_json().contains("selected_by"));
  EXPECT_FALSE(session::train_links(whole_dataset(f.ds), f.split, o, plan_with(link_head_kind::dot))
                   .config.contains("select_by"))
      << "Hits@K, the default, adds nothing: earlier checkpoints resume";
}

TEST(link_training, learned_embeddings_rank_the_held_out_links_of_a_graph_without_features) {
  const link_fixture f;
  auto o = link_options();
  // Each vertex has a handful of training edges to learn its row from:
  // slower than features, so more epochs at a higher rate.
  o.epochs = 20;
  o.loading.max_minibatches = 0;
  o.node_embedding = 16;
  o.optimizer.lr = 0.03f;
  o.model.dropout = 0.0f;
  const auto ds = without_features(f.ds);
  const auto result = session::train_links(ds, f.split, o, plan_with(link_head_kind::dot));
  const auto& first = result.epochs.front();
  const auto& last = result.epochs.back();
  EXPECT_LT(last.loss, first.loss);
  ASSERT_TRUE(last.valid_mrr && last.test_mrr);
  // Random ranking among 20 tails gives H(21)/21 ≈ 0.17 (about 0.01 of
  // noise over the held-out positives); the edges follow the CSBM's
  // classes, which the embeddings learn from the edges alone (0.26 here).
  EXPECT_GT(*last.valid_mrr, 0.22);
  EXPECT_GT(*last.test_mrr, 0.22);
  EXPECT_EQ(result.config.at("node_embedding"), 16);
  EXPECT_EQ(result.config.at("in_features"), 16);
  EXPECT_GT(result.parameters.size(), static_cast<std::size_t>(ds.num_nodes * 16));
}

TEST(link_training, learned_embeddings_train_alike_for_any_thread_count_bulk_and_resume) {
  const link_fixture f;
  const auto ds = without_features(f.ds);
  const auto plan = plan_with(link_head_kind::mlp);
  auto o = link_options();
  o.epochs = 2;
  o.node_embedding = 8;
  std::vector<float> one_thread;
  {
    const thread_limit limit(1);
    one_thread = session::train_links(ds, f.split, o, plan).parameters;
  }
  o.loading.bulk = 1;
  o.loading.ready_queue = 1;
  EXPECT_TRUE(bitwise_equal(one_thread, session::train_links(ds, f.split, o, plan).parameters));

  o.checkpoint_dir = f.dir / "interrupted";
  o.epochs = 1;
  std::ignore = session::train_links(ds, f.split, o, plan);
  o.epochs = 2;
  o.resume = true;
  EXPECT_TRUE(bitwise_equal(one_thread, session::train_links(ds, f.split, o, plan).parameters));
  // Another width is another run.
  o.node_embedding = 4;
  EXPECT_THROW(std::ignore = session::train_links(ds, f.split, o, plan), option_error);
}

TEST(link_training, learned_embeddings_are_refused_where_they_would_mean_nothing) {
  const link_fixture f;
  const auto message = [](const auto& run) {
    try {
      run();
      return std::string("accepted");
    } catch (const option_error& e) {
      return std::string(e.what());
    }
  };
  const auto plan = plan_with(link_head_kind::dot);
  auto o = link_options();
  o.epochs = 1;
  EXPECT_NE(message([&] {
              std::ignore = session::train_links(without_features(f.ds), f.split, o, plan);
            }).find("train_options.node_embedding"),
            std::string::npos)
      << "a graph without features names the option that trains on it";
  o.node_embedding = 8;
  EXPECT_NE(message([&] {
              std::ignore = session::train_links(whole_dataset(f.ds), f.split, o, plan);
            }).find("has 16 node features"),
            std::string::npos);
  o.normalize_features = loader::feature_normalization::row;
  EXPECT_NE(message([&] {
              std::ignore = session::train_links(without_features(f.ds), f.split, o, plan);
            }).find("train_options.normalize_features: a learned embedding"),
            std::string::npos);
  o.normalize_features = loader::feature_normalization::none;
  o.node_embedding = -1;
  EXPECT_NE(message([&] {
              std::ignore = session::train_links(without_features(f.ds), f.split, o, plan);
            }).find("train_options.node_embedding must be in"),
            std::string::npos);
}

TEST(link_training, epoch_records_name_the_link_metrics) {
  epoch_record r;
  r.hits_k = 50;
  r.valid_acc = 0.5;
  r.valid_mrr = 0.25;
  const auto j = r.to_json();
  EXPECT_EQ(j.at("valid_hits@50"), 0.5);
  EXPECT_EQ(j.at("valid_mrr"), 0.25);
  EXPECT_TRUE(j.at("test_hits@50").is_null());
  EXPECT_FALSE(j.contains("valid_acc"));
}

}  // namespace
}  // namespace bulkgnn::trainer
