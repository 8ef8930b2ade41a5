// `mpirun -np P bulkgnn ...` end to end: every grid and rank count gives the
// single-process minibatches (equal digests), data-parallel training is the
// single-process training, a failure on one rank ends every rank, and ranks
// given different data or settings stop at start-up naming the difference.
#include "run_command.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path cora = fs::path(BULKGNN_SHARED_DATA) / "cora";
const fs::path facebook = fs::path(BULKGNN_SHARED_DATA) / "facebook";

using bulkgnn::testing::run_result;

// mpirun with one thread per rank (CombBLAS's OpenMP threads spin; with more
// ranks than cores they starve) and this test's own Open MPI session
// directory: concurrent mpiruns sharing one remove each other's top directory
// as they end.
std::string mpirun() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto sessions =
      fs::path(BULKGNN_MPI_SESSIONS) /
      (test ? std::string(test->test_suite_name()) + "." + test->name() : "outside-a-test");
  return "env OMPI_MCA_orte_tmpdir_base=" + sessions.string() + " " + BULKGNN_MPIEXEC +
         " -x OMP_NUM_THREADS=1 --allow-run-as-root --oversubscribe";
}

// Runs bulkgnn on `ranks` MPI ranks (0: without mpirun), with a time limit
// so that a hang fails the test instead of stalling it.
// `environment`: NAME=VALUE set for the program (and every rank).
run_result run(int ranks, const std::string& arguments, const std::string& environment = "") {
  std::string command = "timeout 240 ";
  if (!environment.empty()) command = "env " + environment + " " + command;
  if (ranks > 0)
    command += mpirun() +
               (environment.empty() ? "" : " -x " + environment.substr(0, environment.find('='))) +
               " -np " + std::to_string(ranks) + " ";
  command += std::string(BULKGNN_CLI) + " " + arguments;
  return bulkgnn::testing::run_command(command);
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string digest_of(int ranks, const std::string& arguments, const fs::path& metrics) {
  const auto r = run(ranks, arguments + " --quiet --metrics-out " + metrics.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return "failed";
  return read_json(metrics).at("digest").get<std::string>();
}

struct layout {
  int ranks;
  std::string grid;
};

class SampleOnEveryGrid : public ::testing::TestWithParam<layout> {};

INSTANTIATE_TEST_SUITE_P(
    Layouts, SampleOnEveryGrid,
    ::testing::Values(layout{1, "replicated"}, layout{2, "replicated"}, layout{2, "1.5d"},
                      layout{4, "1.5d --replication 2"}, layout{4, "1.5d --partition metis"},
                      layout{8, "1.5d --replication 2"}, layout{4, "2d"}, layout{4, "2d-summa"},
                      layout{4, "2d --draw-at requester"}, layout{8, "3d --replication 2"}),
    [](const auto& info) {
      std::string name = "np" + std::to_string(info.param.ranks) + "_" + info.param.grid;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST_P(SampleOnEveryGrid, DigestEqualsTheSingleProcessDigest) {
  if (GetParam().grid == "2d-summa" && !BULKGNN_HAVE_COMBBLAS)
    GTEST_SKIP() << "2d-summa needs CombBLAS, which this build lacks (the GPU check's build)";
  const bulkgnn::testing::scratch_dir dir;
  for (const std::string sampler : {"--fanouts 10,5", "--sampler ladies --fanouts 256,256",
                                    "--sampler fastgcn --fanouts 256,256"}) {
    const std::string arguments = "sample " + facebook.string() + " " + sampler +
                                  " --batch-size 512 --bulk 3 --max-minibatches 12";
    const auto alone = digest_of(0, arguments, dir.path() / "alone.json");
    const auto metrics = dir.path() / "ranks.json";
    EXPECT_EQ(digest_of(GetParam().ranks, arguments + " --grid " + GetParam().grid, metrics), alone)
        << sampler;
    const auto m = read_json(metrics);
    EXPECT_EQ(m.at("minibatches"), 12);
    std::int64_t sent = 0;
    for (const auto& rank : m.at("distributed").at("traffic_by_rank"))
      sent += rank.at("sampling").at("bytes_sent").get<std::int64_t>();
    if (GetParam().grid != "replicated") {
      EXPECT_GT(sent, 0) << "a sharded graph must move rows";
    }
    ASSERT_EQ(m.at("traffic_by_epoch").size(), 1u);
    EXPECT_EQ(m.at("distributed")
                      .at("setup_traffic")
                      .at("sampling")
                      .at("bytes_sent")
                      .get<std::int64_t>() +
                  m.at("traffic_by_epoch")[0].at("sampling").at("bytes_sent").get<std::int64_t>(),
              sent);
  }
}

// Per-epoch losses and accuracies of a training run.
std::vector<std::array<double, 3>> training_curve(
    int ranks, const std::string& extra, const fs::path& metrics, const fs::path& data = cora,
    const std::string& sampling = "--fanouts 10,10 --batch-size 64") {
  const auto r = run(ranks, "train " + data.string() + " " + sampling +
                                " --hidden 32 --epochs 3 --quiet --metrics-out " +
                                metrics.string() + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::array<double, 3>> curve;
  if (r.exit_code != 0) return curve;
  const auto m = read_json(metrics);
  for (const auto& e : m.at("epochs"))
    curve.push_back({e.at("loss").get<double>(), e.at("train_acc").get<double>(),
                     e.at("test_acc").get<double>()});
  return curve;
}

TEST(DataParallelTraining, RanksTrainLikeOneProcessOnTheSameGlobalBatches) {
  const bulkgnn::testing::scratch_dir dir;
  const auto alone = training_curve(0, "", dir.path() / "alone.json");
  ASSERT_EQ(alone.size(), 3u);
  for (const auto& [ranks, extra] : {std::pair<int, std::string>{2, ""},
                                     {4, "--feature-replication 2"},
                                     {4, "--grid 1.5d --replication 2 --partition metis"}}) {
    const auto metrics = dir.path() / "ranks.json";
    const auto curve = training_curve(ranks, extra, metrics);
    ASSERT_EQ(curve.size(), alone.size()) << ranks << " " << extra;
    for (std::size_t e = 0; e < curve.size(); ++e) {
      // Only the order of float sums differs (slices, then an all-reduce).
      EXPECT_NEAR(curve[e][0], alone[e][0], 1e-3) << "loss, epoch " << e;
      EXPECT_NEAR(curve[e][1], alone[e][1], 0.02) << "train accuracy, epoch " << e;
      EXPECT_NEAR(curve[e][2], alone[e][2], 0.02) << "test accuracy, epoch " << e;
    }
    const auto m = read_json(metrics);
    EXPECT_EQ(m.at("config").at("ranks"), ranks);
    const auto& by_rank = m.at("distributed").at("traffic_by_rank");
    ASSERT_EQ(static_cast<int>(by_rank.size()), ranks);
    for (const auto& rank : by_rank) {
      EXPECT_GT(rank.at("gradients").at("bytes_sent").get<std::int64_t>(), 0);
      EXPECT_GT(rank.at("features").at("bytes_received").get<std::int64_t>(), 0);
    }
    // Setup and the epochs' traffic add up to the run's.
    for (const char* stage : {"sampling", "features", "gradients"}) {
      std::int64_t run_total = 0;
      auto epochs_total =
          m.at("distributed").at("setup_traffic").at(stage).at("bytes_sent").get<std::int64_t>();
      for (const auto& rank : by_rank)
        run_total += rank.at(stage).at("bytes_sent").get<std::int64_t>();
      for (const auto& e : m.at("epochs")) {
        const auto sent = e.at("traffic").at(stage).at("bytes_sent").get<std::int64_t>();
        if (std::string(stage) == "gradients") {
          EXPECT_GT(sent, 0) << "every epoch all-reduces";
        }
        epochs_total += sent;
      }
      // After the last epoch the ranks compare their weights' hash: an
      // all-gather of 8 bytes on the gradient communicator.
      const std::int64_t after_epochs =
          std::string(stage) == "gradients" ? std::int64_t{8} * ranks * (ranks - 1) : 0;
      EXPECT_EQ(epochs_total + after_epochs, run_total)
          << stage << ", " << ranks << " ranks " << extra;
    }
  }
}

// Cluster-GCN over ranks: each rank trains on its slice of every batch of
// clusters, weighted by its share of the batch's seeds; with 400 clusters of
// about 7 vertices and one per minibatch, many batches hold fewer seeds than
// 3 ranks, whose empty slices weigh nothing.
TEST(DataParallelTraining, ClusterGcnRanksTrainLikeOneProcess) {
  const bulkgnn::testing::scratch_dir dir;
  const std::string cluster_gcn =
      "--sampler cluster-gcn --clusters 400 --batch-size 1 --fanouts -1,-1";
  const auto alone = training_curve(0, "", dir.path() / "alone.json", cora, cluster_gcn);
  ASSERT_EQ(alone.size(), 3u);
  const auto curve = training_curve(3, "", dir.path() / "ranks.json", cora, cluster_gcn);
  ASSERT_EQ(curve.size(), alone.size());
  for (std::size_t e = 0; e < curve.size(); ++e) {
    EXPECT_NEAR(curve[e][0], alone[e][0], 1e-4) << "loss, epoch " << e;
    EXPECT_NEAR(curve[e][2], alone[e][2], 0.01) << "test accuracy, epoch " << e;
  }
}

// GraphSAINT over ranks: each rank trains on its slice of every drawn
// subgraph's seeds, their normalised losses summed (no share: the slices'
// sums add up to the whole's); small random-walk subgraphs hold a few
// seeds each, so many slices are empty.
TEST(DataParallelTraining, SaintRanksTrainLikeOneProcess) {
  const bulkgnn::testing::scratch_dir dir;
  const std::string saint = "--sampler saint-rw --batch-size 40 --fanouts -1,-1";
  const auto alone = training_curve(0, "", dir.path() / "alone.json", cora, saint);
  ASSERT_EQ(alone.size(), 3u);
  const auto curve = training_curve(3, "", dir.path() / "ranks.json", cora, saint);
  ASSERT_EQ(curve.size(), alone.size());
  for (std::size_t e = 0; e < curve.size(); ++e) {
    EXPECT_NEAR(curve[e][0], alone[e][0], 1e-5 * alone[e][0]) << "loss, epoch " << e;
    EXPECT_NEAR(curve[e][2], alone[e][2], 0.01) << "test accuracy, epoch " << e;
  }
}

// Link prediction over ranks: each rank trains on its slice of every link
// minibatch, weighted by its share of the pairs, so the curve is one
// process's up to the order of float sums; a layout that partitions the graph
// is refused by name.
TEST(DataParallelTraining, LinkRanksTrainLikeOneProcess) {
  const bulkgnn::testing::scratch_dir dir;
  const std::string arguments = "train " + cora.string() +
                                " --task link --link-head mlp --fanouts 5,5 --hidden 16 "
                                "--batch-size 256 --epochs 2 --hits-k 20 "
                                "--ranking-negatives 20 --quiet --metrics-out ";
  const auto curve = [&](int ranks) {
    const auto metrics = dir.path() / ("link" + std::to_string(ranks) + ".json");
    const auto r = run(ranks, arguments + metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::array<double, 3>> values;
    if (r.exit_code != 0) return values;
    const auto json = read_json(metrics);
    for (const auto& e : json.at("epochs"))
      values.push_back({e.at("loss").get<double>(), e.at("valid_mrr").get<double>(),
                        e.at("test_hits@20").get<double>()});
    return values;
  };
  const auto alone = curve(0);
  ASSERT_EQ(alone.size(), 2u);
  for (const int ranks : {2, 3}) {
    const auto together = curve(ranks);
    ASSERT_EQ(together.size(), alone.size()) << ranks << " ranks";
    for (std::size_t e = 0; e < alone.size(); ++e) {
      EXPECT_NEAR(together[e][0], alone[e][0], 1e-4) << "loss, epoch " << e << ", " << ranks;
      EXPECT_NEAR(together[e][1], alone[e][1], 0.01) << "valid mrr, epoch " << e << ", " << ranks;
      EXPECT_NEAR(together[e][2], alone[e][2], 0.01) << "test hits, epoch " << e << ", " << ranks;
    }
  }
  // The first epoch's loss of `options` on `ranks` ranks (0: one process).
  const auto first_loss = [&](const std::string& options, int ranks) {
    const auto metrics = dir.path() / ("first" + std::to_string(ranks) + ".json");
    const auto r = run(ranks, "train " + cora.string() + " --task link " + options +
                                  " --hidden 16 --epochs 1 --hits-k 20 --ranking-negatives 20 "
                                  "--quiet --metrics-out " +
                                  metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? read_json(metrics).at("epochs").at(0).at("loss").get<double>() : -1.0;
  };
  // Minibatches of 2 positives over 3 ranks: the third rank's slices hold
  // no positive (one of the three negatives), and it still steps with the others.
  const std::string tiny = "--fanouts 5,5 --batch-size 2 --max-minibatches 6";
  EXPECT_NEAR(first_loss(tiny, 3), first_loss(tiny, 0), 1e-4);
  // LADIES' draw spans a minibatch's frontier: each rank samples the whole
  // minibatch and trains on what its slice of the pairs reaches.
  const std::string ladies =
      "--sampler ladies --fanouts 64,64 --batch-size 128 --max-minibatches 4";
  EXPECT_NEAR(first_loss(ladies, 2), first_loss(ladies, 0), 1e-4);

  const auto refused = run(2, arguments + (dir.path() / "refused.json").string() + " --grid 1.5d");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("--grid 1.5d: --task link"), std::string::npos) << refused.output;
}

// Node classification on a graph without features, its embedding table
// learned over ranks: each rank holds the whole table and the ranks sum its
// gradient, so they train what one process trains; the evaluation by shares
// reads the table.
TEST(DataParallelTraining, LearnedEmbeddingRanksTrainLikeOneProcess) {
  const bulkgnn::testing::scratch_dir dir;
  const auto data = dir.path() / "featureless";
  const auto generated = run(0, "generate csbm " + data.string() +
                                    " --nodes 2000 --average-degree 10 --features 0 --quiet");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  const auto curve = [&](int ranks, const std::string& extra) {
    const auto metrics = dir.path() / ("embedding" + std::to_string(ranks) + ".json");
    const auto r = run(ranks, "train " + data.string() +
                                  " --node-embedding 16 --lr 0.03 --fanouts 5,5 --hidden 16 "
                                  "--batch-size 128 --epochs 3 --quiet " +
                                  extra + " --metrics-out " + metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::array<double, 2>> values;
    if (r.exit_code != 0) return values;
    const auto json = read_json(metrics);
    for (const auto& e : json.at("epochs"))
      values.push_back({e.at("loss").get<double>(), e.at("valid_acc").get<double>()});
    return values;
  };
  const auto alone = curve(0, "");
  ASSERT_EQ(alone.size(), 3u);
  EXPECT_GT(alone.back()[1], 0.5) << "four classes: chance is 0.25";
  for (const auto& [ranks, extra] :
       {std::pair<int, std::string>{2, ""}, {3, "--grid 1.5d --replication 3"}}) {
    const auto together = curve(ranks, extra);
    ASSERT_EQ(together.size(), alone.size()) << ranks << " " << extra;
    for (std::size_t e = 0; e < alone.size(); ++e) {
      // Only the order of float sums differs (slices, then an all-reduce).
      EXPECT_NEAR(together[e][0], alone[e][0], 1e-3) << "loss, epoch " << e << ", " << ranks;
      EXPECT_NEAR(together[e][1], alone[e][1], 0.02) << "valid, epoch " << e << ", " << ranks;
    }
  }
  const auto parts = dir.path() / "parts";
  ASSERT_EQ(
      run(0, "partition " + data.string() + " " + parts.string() + " --parts 2 --quiet").exit_code,
      0);
  const auto refused =
      run(2, "train " + parts.string() + " --grid 1.5d --node-embedding 8 --quiet");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("--node-embedding: csbm"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("is a part of a partitioned dataset"), std::string::npos)
      << refused.output;
}

// The cache serves the owners' rows: the same training, fewer feature bytes.
TEST(DataParallelTraining, AFeatureCacheChangesTheBytesNotTheTraining) {
  const bulkgnn::testing::scratch_dir dir;
  const auto no_cache = dir.path() / "no-cache.json";
  const auto plain = training_curve(4, "", no_cache);
  ASSERT_EQ(plain.size(), 3u);
  const auto features_sent = [](const nlohmann::json& epoch) {
    return epoch.at("traffic").at("features").at("bytes_sent").get<std::int64_t>();
  };
  for (const std::string choice : {"degree", "access"}) {
    const auto metrics = dir.path() / (choice + ".json");
    EXPECT_EQ(training_curve(4, "--feature-cache 2 --feature-cache-choice " + choice, metrics),
              plain)
        << choice;
    const auto m = read_json(metrics);
    const auto base = read_json(no_cache);
    ASSERT_EQ(m.at("epochs").size(), 3u);
    for (std::size_t e = 0; e < 3; ++e) {
      const auto& cache = m.at("epochs")[e].at("feature_cache");
      // Chosen by access, the cache fills after the first epoch; its fetch
      // counts in the second.
      if (choice == "degree" || e == 2) {
        EXPECT_GT(cache.at("hit_rate").get<double>(), 0.05) << choice << " epoch " << e;
        EXPECT_LT(features_sent(m.at("epochs")[e]), features_sent(base.at("epochs")[e]))
            << choice << " epoch " << e;
      }
      if (choice != "degree" && e == 0) {
        EXPECT_EQ(cache.at("hits").get<std::int64_t>(), 0);
      }
    }
  }
}

TEST(MpiFailures, AFailureOnOneRankEndsEveryRankWithItsMessage) {
  // Every rank checks its --metrics-out before its first collective call;
  // whichever fails first ends them all. They hold a native dataset: an OGB
  // one would be half-imported when the abort ends them, and left behind.
  const bulkgnn::testing::scratch_dir dir;
  const auto data = dir / "csbm";
  ASSERT_EQ(run(0, "generate csbm --quiet --nodes 2000 " + data.string()).exit_code, 0);
  const auto r = run(4, "sample " + data.string() +
                            " --fanouts 5 --batch-size 16 --quiet --grid 1.5d "
                            "--metrics-out /nonexistent-directory/metrics.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.output.find(" of 4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nonexistent-directory"), std::string::npos) << r.output;
}

// Runs bulkgnn under one mpirun with each rank's own arguments (MPMD:
// `mpirun -np 1 bulkgnn A : -np 1 bulkgnn B`), with a time limit well
// below the test's, so that a hang shows as exit code 124.
run_result run_per_rank(const std::vector<std::string>& arguments_by_rank) {
  std::string command = "timeout 60 " + mpirun();
  for (std::size_t r = 0; r < arguments_by_rank.size(); ++r)
    command +=
        std::string(r == 0 ? "" : " :") + " -np 1 " + BULKGNN_CLI + " " + arguments_by_rank[r];
  return bulkgnn::testing::run_command(command);
}

// Every rank ended with the same ordinary error naming `expected`: no rank
// hung, crashed or was aborted by another.
void expect_every_rank_reports(const run_result& r, int ranks, const std::string& expected) {
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_LT(r.exit_code, 128) << "a rank died of a signal\n" << r.output;
  EXPECT_EQ(r.output.find("MPI_ABORT"), std::string::npos) << r.output;
  for (int rank = 0; rank < ranks; ++rank) {
    const auto line = fmt::format("bulkgnn (rank {} of {}): error: the ranks disagree on {}", rank,
                                  ranks, expected);
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
}

const std::string small_training = " --fanouts 5 --batch-size 64 --hidden 16 --epochs 1 --quiet";

TEST(RanksThatDisagree, OnTheDatasetFailAtStartUpNamingIt) {
  // Used to segfault: rank 0 fetched cora feature rows from rank 1's facebook.
  const auto r = run_per_rank(
      {"train " + cora.string() + small_training, "train " + facebook.string() + small_training});
  expect_every_rank_reports(r, 2, "DATA (2708 vertices");
  EXPECT_NE(r.output.find("22470 vertices"), std::string::npos) << r.output;
}

TEST(RanksThatDisagree, OnTheEpochsFailAtStartUpNamingThem) {
  // Used to hang: rank 1 waited for a second epoch's all-reduce.
  const std::string train = "train " + cora.string() + " --fanouts 5 --batch-size 64 --quiet";
  const auto r = run_per_rank({train + " --epochs 1", train + " --epochs 2"});
  expect_every_rank_reports(r, 2, "--epochs (1 on rank 0; 2 on rank 1)");
}

TEST(RanksThatDisagree, OnTheHiddenWidthFailAtStartUpNamingIt) {
  // Used to abort with MPI_ERR_TRUNCATE or corrupt the heap: gradient
  // all-reduces of different lengths.
  const std::string train = "train " + cora.string() + " --fanouts 10,10 --batch-size 16 --quiet";
  const auto r = run_per_rank({train + " --hidden 64", train + " --hidden 32"});
  expect_every_rank_reports(r, 2, "--hidden (64 on rank 0; 32 on rank 1)");
}

TEST(RanksThatDisagree, OnTheFanoutsFailAtStartUpInsteadOfPrintingADigest) {
  // Used to exit 0 with a digest of minibatches sampled two ways.
  const std::string sample = "sample " + cora.string() + " --batch-size 16 --quiet";
  const auto r = run_per_rank({sample + " --fanouts 5", sample + " --fanouts 10"});
  expect_every_rank_reports(r, 2, "--fanouts (5 on rank 0; 10 on rank 1)");
  EXPECT_EQ(r.output.find("digest"), std::string::npos) << r.output;
}

TEST(RanksThatDisagree, AreGroupedByValueAndEverySettingThatDiffersIsNamed) {
  const std::string sample = "sample " + cora.string() + " --fanouts 5 --batch-size 16 --quiet";
  const auto r = run_per_rank({sample, sample + " --seed 1 --bulk 2", sample, sample});
  expect_every_rank_reports(
      r, 4, "--bulk (32 on ranks 0, 2-3; 2 on rank 1), --seed (0 on ranks 0, 2-3; 1 on rank 1)");
}

TEST(RanksThatDisagree, OnTheCommandFailAtStartUpNamingIt) {
  const auto r = run_per_rank({"sample " + cora.string() + " --fanouts 5 --batch-size 64 --quiet",
                               "train " + cora.string() + small_training});
  expect_every_rank_reports(r, 2, "command (sample on rank 0; train on rank 1)");
}

TEST(RanksThatDisagree, NotOnPerRankOptionsRunNormally) {
  const bulkgnn::testing::scratch_dir dir;
  const std::string sample = "sample " + cora.string() + " --fanouts 5 --batch-size 16 --quiet";
  const auto r =
      run_per_rank({sample + " --threads 1 --metrics-out " + (dir / "metrics.json").string(),
                    sample + " --threads 2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "metrics.json"));
}

// Only rank 0 writes the metrics, but a path given to another rank that
// cannot be written is not silently ignored either.
TEST(RanksThatDisagree, OnAMetricsPathThatOneRankCannotWriteFailNamingIt) {
  const bulkgnn::testing::scratch_dir dir;
  const std::string sample = "sample " + cora.string() + " --fanouts 5 --batch-size 16 --quiet";
  const auto r = run_per_rank({sample + " --metrics-out " + (dir / "metrics.json").string(),
                               sample + " --metrics-out /nonexistent-directory/metrics.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.output.find("rank 1 of 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nonexistent-directory"), std::string::npos) << r.output;
}

TEST(RanksThatDisagree, OnWhetherTheCommandLineIsValidEndWithoutHanging) {
  // The rank with the bad option ends every rank at once, so the others must
  // not be importing an OGB directory (they would leave it half-written):
  // a native dataset, where they wait in their first collective call.
  const bulkgnn::testing::scratch_dir dir;
  const auto data = dir / "csbm";
  ASSERT_EQ(run(0, "generate csbm --quiet --nodes 2000 " + data.string()).exit_code, 0);
  const std::string sample = "sample " + data.string() + " --fanouts 5 --batch-size 16 --quiet";
  const auto r = run_per_rank({sample, sample + " --no-such-option"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung\n" << r.output;
  EXPECT_NE(r.output.find("--no-such-option"), std::string::npos) << r.output;
}

TEST(MpiFailures, ImpossibleLayoutsAreRejectedByName) {
  for (const auto& [ranks, options, expected] :
       {std::tuple<int, std::string, std::string>{3, "--grid 1.5d --replication 2",
                                                  "--replication"},
        {2, "--grid 2d", "square"},
        {2, "--grid hypercube", "--grid"},
        {0, "--grid 1.5d", "mpirun"}}) {
    const auto r =
        run(ranks, "sample " + cora.string() + " --fanouts 5 --batch-size 16 --quiet " + options);
    EXPECT_NE(r.exit_code, 0) << options;
    EXPECT_NE(r.exit_code, 124) << "timed out: " << options;
    EXPECT_NE(r.output.find(expected), std::string::npos) << options << ": " << r.output;
    // Every rank finds the layout impossible alike and ends normally.
    EXPECT_EQ(r.output.find("MPI_ABORT"), std::string::npos) << options << ": " << r.output;
  }
}

// Ranks that read only their part of a partitioned dataset (bulkgnn
// partition) draw the minibatches of the whole dataset.
TEST(PartitionedData, EveryGridSamplesTheWholeDatasetsMinibatches) {
  const bulkgnn::testing::scratch_dir dir;
  struct sharded_layout {
    int ranks;
    std::string grid;
    int parts;
    std::string method;
  };
  for (const auto& [ranks, grid, parts, method] :
       {sharded_layout{2, "1.5d", 2, "metis"},
        sharded_layout{8, "1.5d --replication 2", 4, "block"}, sharded_layout{4, "2d", 2, "metis"},
        sharded_layout{4, "2d --draw-at requester", 2, "block"},
        sharded_layout{8, "3d --replication 2", 4, "block"},
        sharded_layout{0, "replicated", 1, "block"}}) {
    const auto parted = dir / fmt::format("facebook-{}-{}", parts, method);
    if (!fs::exists(parted)) {
      const auto r = run(0, fmt::format("partition {} {} --parts {} --method {} --quiet",
                                        facebook.string(), parted.string(), parts, method));
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    for (const std::string sampler : {"--fanouts 10,5", "--sampler ladies --fanouts 256,256",
                                      "--sampler fastgcn --fanouts 256,256"}) {
      const std::string arguments =
          sampler + " --batch-size 512 --bulk 3 --max-minibatches 12 --grid " + grid;
      const auto alone = digest_of(0,
                                   "sample " + facebook.string() + " " + sampler +
                                       " --batch-size 512 --bulk 3 --max-minibatches 12",
                                   dir / "alone.json");
      const auto metrics = dir / "shards.json";
      EXPECT_EQ(digest_of(ranks, "sample " + parted.string() + " " + arguments, metrics), alone)
          << grid << " " << sampler;
      EXPECT_TRUE(read_json(metrics).at("partitioned_data").get<bool>());
    }
  }
}

// The largest rank's peak resident set of `sample`, with glibc's allocator
// held to two arenas: its per-thread arenas otherwise make the peak depend on
// how the machine's load interleaves the threads.
std::int64_t peak_resident_mib(int ranks, const fs::path& data, const std::string& grid,
                               const fs::path& metrics) {
  const auto r = run(ranks,
                     "sample " + data.string() +
                         " --fanouts 10,5 --batch-size 256 --bulk 2 --max-minibatches 2 "
                         "--quiet --grid " +
                         grid + " --metrics-out " + metrics.string(),
                     "MALLOC_ARENA_MAX=2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return 0;
  const auto by_rank = read_json(metrics).at("peak_resident_bytes_by_rank");
  EXPECT_EQ(static_cast<int>(by_rank.size()), std::max(ranks, 1));
  std::int64_t largest = 0;
  for (const auto& bytes : by_rank) largest = std::max(largest, bytes.get<std::int64_t>());
  return largest >> 20;
}

// Memory for the graph (60 MiB of topology) is what each run holds beyond the
// same run on a tiny graph (the program, MPI, the sampler's buffers); a rank
// reading a quarter of the graph holds about a quarter of it, plus 12 bytes
// per vertex of partition maps.
TEST(PartitionedData, RanksThatReadTheirPartHoldLessThanRanksThatMapTheWholeGraph) {
  const bulkgnn::testing::scratch_dir dir;
  const auto whole = dir / "rmat";
  const auto tiny = dir / "tiny";
  ASSERT_EQ(run(0, "generate rmat --scale 19 --edge-factor 32 --quiet " + whole.string()).exit_code,
            0);
  ASSERT_EQ(run(0, "generate rmat --scale 10 --edge-factor 32 --quiet " + tiny.string()).exit_code,
            0);
  for (const int parts : {1, 4})
    ASSERT_EQ(run(0, fmt::format("partition {} {} --parts {} --quiet", whole.string(),
                                 (dir / fmt::format("rmat-{}", parts)).string(), parts))
                  .exit_code,
              0);
  const auto metrics = dir / "metrics.json";
  const auto base_alone = peak_resident_mib(0, tiny, "replicated", metrics);
  const auto base_ranks = peak_resident_mib(4, tiny, "1.5d", metrics);
  const auto alone = peak_resident_mib(0, dir / "rmat-1", "replicated", metrics) - base_alone;
  const auto mapping_all = peak_resident_mib(4, whole, "1.5d", metrics) - base_ranks;
  const auto reading_a_part = peak_resident_mib(4, dir / "rmat-4", "1.5d", metrics) - base_ranks;
  EXPECT_LT(reading_a_part * 2, alone)
      << alone << " MiB for the graph alone, " << reading_a_part << " MiB per rank of 4";
  EXPECT_LT(reading_a_part * 2, mapping_all)
      << mapping_all << " MiB mapping the whole graph, " << reading_a_part << " MiB its part";
}

TEST(PartitionedData, ARankThatCannotReadItsPartEndsEveryRankNamingTheFile) {
  const bulkgnn::testing::scratch_dir dir;
  const auto parted = dir / "facebook-2";
  ASSERT_EQ(run(0, "partition " + facebook.string() + " " + parted.string() + " --parts 2 --quiet")
                .exit_code,
            0);
  fs::remove(parted / "part-1" / "indices.npy");
  const auto r =
      run(2, "sample " + parted.string() + " --fanouts 5 --batch-size 64 --quiet --grid 1.5d");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.output.find("rank 1 of 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("part-1/indices.npy"), std::string::npos) << r.output;
}

TEST(PartitionedData, FullBatchTrainingSaysItReadsTheWholeDataset) {
  const bulkgnn::testing::scratch_dir dir;
  const auto parted = dir / "facebook-2";
  ASSERT_EQ(run(0, "partition " + facebook.string() + " " + parted.string() + " --parts 2 --quiet")
                .exit_code,
            0);
  const auto r = run(2, "train " + parted.string() + " --mode full-batch --epochs 1 --quiet");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.output.find("full-batch training reads a whole dataset"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("bulkgnn-native"), std::string::npos) << r.output;
}

TEST(PartitionedData, ALayoutThatNeedsAnotherPartCountIsRefusedNamingIt) {
  const bulkgnn::testing::scratch_dir dir;
  const auto parted = dir / "facebook-4";
  ASSERT_EQ(run(0, "partition " + facebook.string() + " " + parted.string() + " --parts 4 --quiet")
                .exit_code,
            0);
  const auto r =
      run(4, "sample " + parted.string() + " --fanouts 5 --batch-size 64 --quiet --grid 2d");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "timed out: a rank hung";
  EXPECT_NE(r.output.find("partition it with 2 parts"), std::string::npos) << r.output;
}

// Ranks that read only their part of the graph and of the features train
// as one process on the whole dataset.
TEST(PartitionedData, TrainingOnPartsIsTrainingOnTheWholeDataset) {
  const bulkgnn::testing::scratch_dir dir;
  for (const auto& [parts, method] : {std::pair<int, std::string>{2, "metis"}, {4, "block"}})
    ASSERT_EQ(run(0, fmt::format("partition {} {} --parts {} --method {} --quiet", cora.string(),
                                 (dir / fmt::format("cora-{}", parts)).string(), parts, method))
                  .exit_code,
              0);
  const auto alone = training_curve(0, "--eval sampled", dir / "alone.json");
  ASSERT_EQ(alone.size(), 3u);
  for (const auto& [ranks, extra, parts] : {std::tuple<int, std::string, int>{2, "--grid 1.5d", 2},
                                            {4, "--grid 2d --feature-replication 2", 2},
                                            {4, "--grid 1.5d --feature-cache 1", 4}}) {
    const auto metrics = dir / "parts.json";
    const auto curve = training_curve(ranks, extra + " --eval sampled", metrics,
                                      dir / fmt::format("cora-{}", parts));
    ASSERT_EQ(curve.size(), alone.size()) << extra;
    for (std::size_t e = 0; e < curve.size(); ++e) {
      EXPECT_NEAR(curve[e][0], alone[e][0], 1e-3) << extra << ": loss, epoch " << e;
      EXPECT_NEAR(curve[e][1], alone[e][1], 0.02) << extra << ": train accuracy, epoch " << e;
      EXPECT_NEAR(curve[e][2], alone[e][2], 0.02) << extra << ": test accuracy, epoch " << e;
    }
    const auto layout = read_json(metrics).at("distributed").at("layout");
    EXPECT_TRUE(layout.at("grid").at("from_shards").get<bool>()) << extra;
    EXPECT_EQ(layout.at("features").at("parts").get<int>(), parts) << extra;
  }
  // Row normalisation's factors, gathered from the parts, are the whole dataset's.
  const auto normalized =
      training_curve(0, "--eval sampled --normalize-features row", dir / "alone-normalized.json");
  for (const auto& [ranks, extra, parts] : {std::tuple<int, std::string, int>{2, "--grid 1.5d", 2},
                                            {4, "--grid 2d --feature-replication 2", 2}}) {
    const auto curve =
        training_curve(ranks, extra + " --eval sampled --normalize-features row",
                       dir / "parts-normalized.json", dir / fmt::format("cora-{}", parts));
    ASSERT_EQ(curve.size(), normalized.size()) << extra;
    for (std::size_t e = 0; e < curve.size(); ++e) {
      EXPECT_NEAR(curve[e][0], normalized[e][0], 1e-3) << extra << ": loss, epoch " << e;
      EXPECT_NEAR(curve[e][2], normalized[e][2], 0.02) << extra << ": test accuracy, epoch " << e;
    }
  }
}

// {valid, test} accuracy of full-graph evaluation after one epoch whose
// steps leave the initial weights as they are (lr 1e-30), so that every
// layout evaluates the same model.
std::array<double, 2> untrained_accuracy(int ranks, const fs::path& data, const std::string& extra,
                                         const fs::path& metrics) {
  const auto r = run(ranks, "train " + data.string() +
                                " --batch-size 64 --hidden 16 --epochs 1 --lr 1e-30 --quiet "
                                "--eval full --metrics-out " +
                                metrics.string() + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return {-1, -1};
  const auto m = read_json(metrics);
  const auto& epoch = m.at("epochs").back();
  return {epoch.at("valid_acc").get<double>(), epoch.at("test_acc").get<double>()};
}

// Each rank evaluates its share of the vertices layer by layer, reading rows
// and features through its grid and feature layout: the accuracies are the
// single process's to the last bit, for GraphSAGE and for GCN over D̃⁻¹(A+I).
TEST(DataParallelTraining, FullGraphEvaluationBySharesIsTheSingleProcesssEvaluation) {
  const bulkgnn::testing::scratch_dir dir;
  ASSERT_EQ(run(0, "partition " + cora.string() + " " + (dir / "cora-2").string() +
                       " --parts 2 --method metis --quiet")
                .exit_code,
            0);
  for (const std::string model :
       {"--fanouts 5,5 --normalize-features row", "--sampler ladies --fanouts 64,64"}) {
    const auto alone = untrained_accuracy(0, cora, model, dir / "alone.json");
    ASSERT_GT(alone[0], 0) << model;
    for (const auto& [ranks, layout] : {std::pair<int, std::string>{2, "--grid 1.5d"},
                                        {3, "--grid replicated --feature-replication 1"},
                                        {4, "--grid 2d"},
                                        {8, "--grid 3d --replication 2"}})
      EXPECT_EQ(untrained_accuracy(ranks, cora, model + " " + layout, dir / "ranks.json"), alone)
          << model << " " << layout;
  }
  // A partitioned dataset (normalising features needs every row: not here).
  const std::string model = "--fanouts 5,5";
  EXPECT_EQ(untrained_accuracy(2, dir / "cora-2", model + " --grid 1.5d", dir / "parts.json"),
            untrained_accuracy(0, cora, model, dir / "alone.json"));
}

// Per-epoch losses and the final test accuracy of a full-batch run, and its
// metrics.
nlohmann::json full_batch(int ranks, const std::string& extra, const fs::path& metrics) {
  const auto r = run(ranks, "train " + cora.string() +
                                " --mode full-batch --hidden 16 --epochs 5 --eval-every 5 "
                                "--normalize-features row --quiet --metrics-out " +
                                metrics.string() + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? read_json(metrics) : nlohmann::json();
}

class FullBatchOnEveryGrid : public ::testing::TestWithParam<layout> {};

INSTANTIATE_TEST_SUITE_P(Layouts, FullBatchOnEveryGrid,
                         ::testing::Values(layout{2, "1d"}, layout{2, "sar"},
                                           layout{4, "1.5d --replication 2"}, layout{4, "2d"},
                                           layout{4, "sar --partition metis"},
                                           layout{8, "3d --replication 2"}),
                         [](const auto& info) {
                           std::string name =
                               "np" + std::to_string(info.param.ranks) + "_" + info.param.grid;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// GCN and GraphSAGE on the whole graph: every grid trains the single
// process's model (losses and accuracy), and moves the bytes of its closed
// forms (exact where the parts are equal, as cora's 2708 rows on 2 and 4).
TEST_P(FullBatchOnEveryGrid, TrainsTheSingleProcesssModelMovingTheClosedFormsBytes) {
  const bulkgnn::testing::scratch_dir dir;
  for (const std::string model : {"--model gcn", "--model sage"}) {
    const auto alone = full_batch(0, model, dir / "alone.json");
    const auto ranks =
        full_batch(GetParam().ranks, model + " --grid " + GetParam().grid, dir / "ranks.json");
    ASSERT_FALSE(alone.is_null() || ranks.is_null()) << model;
    ASSERT_EQ(ranks.at("config").at("ranks"), GetParam().ranks);
    for (std::size_t e = 0; e < 5; ++e)
      EXPECT_NEAR(ranks.at("epochs")[e].at("loss").get<double>(),
                  alone.at("epochs")[e].at("loss").get<double>(), 1e-5)
          << model << " epoch " << e;
    EXPECT_NEAR(ranks.at("final").at("test_acc").get<double>(),
                alone.at("final").at("test_acc").get<double>(), 0.002)
        << model;
    const auto& traffic = ranks.at("epochs")[4].at("traffic_bytes");
    const auto& predicted = ranks.at("predicted_epoch_bytes");
    for (const char* stage : {"forward", "backward", "gradients"}) {
      const auto want = predicted.at(stage).get<double>();
      EXPECT_GT(want, 0) << stage;
      EXPECT_NEAR(traffic.at(stage).get<double>(), want, 0.01 * want) << model << " " << stage;
      if (GetParam().ranks <= 4) {
        EXPECT_EQ(traffic.at(stage).get<double>(), want) << stage;
      }
    }
  }
}

// The compressed exchanges of 1d and sar: the variable schedule sends fewer
// bytes while compressed and the uncompressed bytes from its last epoch on.
TEST(FullBatchCompression, TheVariableScheduleEndsAtTheUncompressedBytes) {
  const bulkgnn::testing::scratch_dir dir;
  for (const std::string grid : {"1d", "sar"}) {
    const auto none = full_batch(4, "--grid " + grid, dir / "none.json");
    const auto variable =
        full_batch(4, "--grid " + grid + " --compress variable:8:4", dir / "variable.json");
    ASSERT_FALSE(none.is_null() || variable.is_null()) << grid;
    const auto forward = [](const nlohmann::json& m, int e) {
      return m.at("epochs")[e].at("traffic_bytes").at("forward").get<double>();
    };
    EXPECT_EQ(variable.at("epochs")[0].at("compression_rate"), 8);
    EXPECT_LT(forward(variable, 0), forward(none, 0) / 4) << grid;
    EXPECT_EQ(variable.at("epochs")[4].at("compression_rate"), 1);
    EXPECT_EQ(forward(variable, 4), forward(none, 4)) << grid;
  }
}

// Impossible full-batch options end every rank with a message naming them.
TEST(FullBatchOptions, ImpossibleCombinationsFailNamingTheOption) {
  const std::string base = "train " + cora.string() + " --quiet --epochs 1 ";
  for (const auto& [ranks, arguments, named] :
       std::vector<std::tuple<int, std::string, std::string>>{
           {2, "--mode full-batch --grid 2d", "square number of ranks"},
           {4, "--mode full-batch --grid 1.5d --replication 3", "c must divide"},
           {4, "--mode full-batch --grid 3d --replication 2", "c·q²"},
           {0, "--compress fixed:4", "--compress applies to --mode full-batch"},
           {0, "--mode full-batch --grid 2d --compress fixed:4", "--grid 1d or sar"},
           {0, "--mode full-batch --fanouts 5,5", "--fanouts applies to --mode minibatch"},
           {0, "--mode full-batch --compress variable:8", "--compress variable:8"}}) {
    const auto r = run(ranks, base + arguments);
    EXPECT_NE(r.exit_code, 0) << arguments;
    EXPECT_NE(r.output.find(named), std::string::npos) << arguments << "\n" << r.output;
  }
}

}  // namespace
