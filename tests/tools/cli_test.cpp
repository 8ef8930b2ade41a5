// End-to-end tests of the `bulkgnn` command: determinism of the sampled
// output across threads and bulk sizes, and clear errors for bad input.
#include "run_command.hpp"
#include "scratch_dir.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path shared_data = BULKGNN_SHARED_DATA;

using bulkgnn::testing::run_result;

run_result run(const std::string& arguments) {
  return bulkgnn::testing::run_command(std::string(BULKGNN_CLI) + " " + arguments);
}

// In one directory per test process (CliOnCora converts cora once per
// process), removed when the process exits.
fs::path scratch(const std::string& name) { return bulkgnn::testing::process_scratch_dir() / name; }

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void write_gz(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
}

class CliOnCora : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(fs::exists(shared_data / "cora" / "raw" / "edge.csv.gz"))
        << "dataset missing: " << shared_data / "cora";
    native_ = scratch("cora-native");
    const auto r =
        run("convert --quiet " + (shared_data / "cora").string() + " " + native_.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  static std::string sample_digest(const std::string& options) {
    const auto metrics = scratch("metrics.json");
    const auto r = run("sample --quiet " + native_.string() + " " + options + " --metrics-out " +
                       metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto json = read_json(metrics);
    EXPECT_GT(json.at("minibatches").get<std::int64_t>(), 0);
    EXPECT_GT(json.at("sampled_edges").get<std::int64_t>(), 0);
    // The rate is the edges over the time the run reports.
    const auto seconds = json.at("seconds").get<double>();
    EXPECT_GT(seconds, 0);
    EXPECT_NEAR(json.at("edges_per_second").get<double>() * seconds,
                json.at("sampled_edges").get<double>(),
                1e-6 * json.at("sampled_edges").get<double>());
    return json.at("digest").get<std::string>();
  }

  // The loss of each of 3 epochs of a small model with every layer on all
  // neighbours, sampled by `sampler` (its options); empty if the run failed.
  static std::vector<double> whole_graph_losses(const std::string& sampler) {
    const auto metrics = scratch("losses.json");
    const auto r = run("train --quiet " + native_.string() +
                       " --fanouts -1,-1 --hidden 16 --epochs 3 --eval-every 0 " + sampler +
                       " --metrics-out " + metrics.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<double> losses;
    if (r.exit_code != 0) return losses;
    const auto json = read_json(metrics);
    for (const auto& e : json.at("epochs")) losses.push_back(e.at("loss").get<double>());
    return losses;
  }

  static inline fs::path native_;
};

TEST_F(CliOnCora, NodeWiseDigestIsTheSameForAnyThreadCountAndBulkSize) {
  const std::string common = "--sampler sage --fanouts 10,5 --batch-size 16 --epochs 2 --seed 3";
  const auto reference = sample_digest(common + " --threads 1 --bulk 1");
  EXPECT_EQ(sample_digest(common + " --threads 2 --bulk 1"), reference);
  EXPECT_EQ(sample_digest(common + " --threads 2 --bulk 7"), reference);
  EXPECT_EQ(sample_digest(common + " --threads 3 --bulk 7"), reference);
  EXPECT_EQ(sample_digest(common + " --threads 1 --bulk 64"), reference);
  EXPECT_NE(sample_digest("--sampler sage --fanouts 10,5 --batch-size 16 --epochs 2 --seed 4"),
            reference);
}

TEST_F(CliOnCora, LadiesDigestIsTheSameForAnyThreadCountAndBulkSize) {
  const std::string common = "--sampler ladies --fanouts 64,64 --batch-size 16 --seed 3";
  const auto reference = sample_digest(common + " --threads 1 --bulk 1");
  EXPECT_EQ(sample_digest(common + " --threads 2 --bulk 7"), reference);
  EXPECT_EQ(sample_digest(common + " --threads 5 --bulk 64"), reference);
}

TEST_F(CliOnCora, RandomWalkDigestIsTheSameForAnyThreadCountAndBulkSize) {
  const std::string common =
      "--sampler random-walk --fanouts 4,3 --batch-size 16 --epochs 2 --seed 3";
  const auto reference = sample_digest(common + " --walk-length 3 --threads 1 --bulk 1");
  EXPECT_EQ(sample_digest(common + " --walk-length 3 --threads 2 --bulk 7"), reference);
  EXPECT_NE(sample_digest(common + " --walk-length 2 --threads 2 --bulk 7"), reference);
}

TEST_F(CliOnCora, OgbRawInputGivesTheSameMinibatchesAsItsConversion) {
  const std::string options = " --quiet --fanouts 5,5 --batch-size 32 --metrics-out ";
  const auto from_raw = scratch("raw.json");
  const auto from_native = scratch("native.json");
  ASSERT_EQ(
      run("sample " + (shared_data / "cora").string() + options + from_raw.string()).exit_code, 0);
  ASSERT_EQ(run("sample " + native_.string() + options + from_native.string()).exit_code, 0);
  EXPECT_EQ(read_json(from_raw).at("digest"), read_json(from_native).at("digest"));
}

TEST_F(CliOnCora, DumpWritesOneJsonLinePerMinibatch) {
  const auto dump = scratch("dump.jsonl");
  const auto r = run("sample --quiet " + native_.string() +
                     " --fanouts 4,4 --batch-size 50 --dump " + dump.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dump);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    const auto mb = nlohmann::json::parse(line);
    EXPECT_EQ(mb.at("blocks").size(), 2u);
    EXPECT_EQ(mb.at("labels").size(), mb.at("seeds").size());
    ++lines;
  }
  EXPECT_EQ(lines, 3);  // 140 training vertices in batches of 50
}

TEST_F(CliOnCora, InfoReportsTheDatasetSize) {
  const auto r = run("info " + native_.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2708"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10556"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train 140 / valid 500 / test 1000"), std::string::npos) << r.output;
}

struct bad_option {
  std::string arguments;
  std::string mentions;
};

// "--fanouts 10,x" → "__fanouts_10_x": a valid test name per option set.
std::string test_name_from_arguments(const ::testing::TestParamInfo<bad_option>& info) {
  std::string name;
  for (char ch : info.param.arguments)
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

class CliRejectsBadOptions : public CliOnCora, public ::testing::WithParamInterface<bad_option> {};

TEST_P(CliRejectsBadOptions, WithAOneLineErrorNamingTheOption) {
  const auto r = run("sample --quiet " + native_.string() + " " + GetParam().arguments);
  EXPECT_EQ(r.exit_code, 2) << r.output;  // a usage error
  EXPECT_NE(r.output.find(GetParam().mentions), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("unexpected"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Sample, CliRejectsBadOptions,
    ::testing::Values(
        bad_option{"--fanouts 10,0", "--fanouts"}, bad_option{"--fanouts 10,-3", "--fanouts"},
        bad_option{"--fanouts 10,x", "--fanouts"}, bad_option{"--batch-size 0", "--batch-size"},
        bad_option{"--bulk 0", "--bulk"}, bad_option{"--split nosuchsplit", "nosuchsplit"},
        bad_option{"--sampler magic", "--sampler"}, bad_option{"--weighted", "--weighted"},
        bad_option{"--threads 0", "--threads"}, bad_option{"--seed -1", "--seed"},
        bad_option{"--epochs 0", "--epochs"}, bad_option{"--fanouts ''", "--fanouts"},
        bad_option{"--partition foo", "--partition"}, bad_option{"--grid 4d", "--grid"},
        bad_option{"--replication 0", "--replication"}, bad_option{"--backend gpu", "--backend"},
        bad_option{"--walk-length 3", "--walk-length"},
        bad_option{"--sampler random-walk --walk-length 0", "--walk-length"},
        bad_option{"--sampler random-walk --fanouts 5,-1", "--fanouts"}),
    test_name_from_arguments);

// The cpu has one GEMM: --gemm fast trains the exact run's model there; any
// other mode is refused, naming the option.
TEST_F(CliOnCora, TrainGemmModesOnTheCpuTrainOneModelAndOthersAreRefused) {
  const auto metrics = scratch("gemm-metrics.json");
  const std::string run_args = "train --quiet " + native_.string() +
                               " --fanouts 5,5 --hidden 16 --batch-size 64 --epochs 2 "
                               "--max-minibatches 4 --metrics-out " +
                               metrics.string();
  std::vector<nlohmann::json> losses;
  for (const std::string mode : {"exact", "fast"}) {
    const auto r = run(run_args + " --gemm " + mode);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto json = read_json(metrics);
    EXPECT_EQ(json.at("config").at("gemm"), mode);
    nlohmann::json epoch_losses = nlohmann::json::array();
    for (const auto& e : json.at("epochs")) epoch_losses.push_back(e.at("loss"));
    losses.push_back(epoch_losses);
  }
  EXPECT_EQ(losses[0], losses[1]);
  const auto refused = run(run_args + " --gemm tf32");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("--gemm"), std::string::npos) << refused.output;
}

// Cluster-GCN with every cluster in one minibatch runs each layer on the
// whole graph, as sage taking every neighbour of every training vertex in
// one minibatch does: the same losses, to rounding (the seeds come in
// another order), so a batch of clusters carries the whole loss once.
TEST_F(CliOnCora, ClusterGcnOverEveryClusterTrainsLikeSageOverEveryNeighbour) {
  const auto cluster = whole_graph_losses("--sampler cluster-gcn --clusters 20 --batch-size 20");
  const auto sage = whole_graph_losses("--sampler sage --batch-size 140");
  ASSERT_EQ(cluster.size(), 3u);
  ASSERT_EQ(sage.size(), 3u);
  for (std::size_t e = 0; e < 3; ++e) EXPECT_NEAR(cluster[e], sage[e], 1e-5) << e;
}

// GraphSAINT node draws with a budget so large that every subgraph is the
// whole graph: every count is M, so the aggregation weights are the mean
// and a seed's loss weight 1/N; graph-conv over the mean is sage's layer, so
// the run is sage over every neighbour of every training vertex in one
// minibatch, its loss the mean's times the training share 140/2708 (Adam
// does not see a gradient's scale, up to its epsilon).
TEST_F(CliOnCora, SaintOverTheWholeGraphTrainsLikeSageItsLossScaledByTheTrainingShare) {
  const auto saint = whole_graph_losses("--sampler saint-node --batch-size 300000 --coverage 3");
  const auto sage = whole_graph_losses("--sampler sage --batch-size 140");
  ASSERT_EQ(saint.size(), 3u);
  ASSERT_EQ(sage.size(), 3u);
  for (std::size_t e = 0; e < 3; ++e)
    EXPECT_NEAR(saint[e] / (sage[e] * 140.0 / 2708.0), 1.0, 1e-4) << e;
}

// Node draws of 5 vertices: most subgraphs hold no training vertex, and
// many seeds read no edge (blocks without entries); training goes on.
TEST_F(CliOnCora, SaintTrainsThroughSubgraphsWithoutSeedsOrEdges) {
  const auto r = run("train --quiet " + native_.string() +
                     " --sampler saint-node --fanouts -1,-1 --batch-size 5 --hidden 16 "
                     "--epochs 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best valid accuracy"), std::string::npos) << r.output;
}

// GraphSAINT's subgraphs do not pass over every vertex once, so they cannot
// evaluate; and its normalised loss is a host kernel.
TEST_F(CliOnCora, SaintRefusesSampledEvaluationByName) {
  const auto r = run("train --quiet " + native_.string() +
                     " --sampler saint-rw --fanouts -1,-1 --batch-size 100 --epochs 1 "
                     "--eval sampled");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--eval sampled"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("saint-rw"), std::string::npos) << r.output;
}

TEST_F(CliOnCora, TrainWritesOneMetricsRecordPerEpochAndTheFinalAccuracy) {
  const auto metrics = scratch("train-metrics.json");
  const auto r = run("train --quiet " + native_.string() +
                     " --fanouts 5,5 --hidden 16 --batch-size 64 --epochs 3 --metrics-out " +
                     metrics.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best valid accuracy"), std::string::npos) << r.output;
  const auto json = read_json(metrics);
  EXPECT_EQ(json.at("config").at("fanouts"), nlohmann::json({5, 5}));
  EXPECT_EQ(json.at("config").at("model"), "sage");
  EXPECT_EQ(json.at("config").at("gemm"), "default");
  ASSERT_EQ(json.at("epochs").size(), 3u);
  for (const auto& e : json.at("epochs")) {
    for (const auto* key : {"epoch", "loss", "train_acc", "valid_acc", "test_acc", "seconds"})
      EXPECT_TRUE(e.contains(key)) << key;
    for (const auto* stage : {"shuffle", "sample", "gather", "consume"})
      EXPECT_GT(e.at("stages").at(stage).at("items").get<std::int64_t>(), 0) << stage;
  }
  const auto& final_record = json.at("final");
  const auto best = final_record.at("best_epoch").get<std::size_t>();  // from 1
  ASSERT_GE(best, 1u);
  EXPECT_EQ(final_record.at("test_acc"), json.at("epochs")[best - 1].at("test_acc"));
  EXPECT_NE(r.output.find(fmt::format("at epoch {};", best)), std::string::npos) << r.output;
  for (std::size_t i = 0; i < json.at("epochs").size(); ++i)
    EXPECT_EQ(json.at("epochs")[i].at("epoch"), i + 1);       // as the console counts
  EXPECT_GT(final_record.at("test_acc").get<double>(), 0.3);  // 7 classes: chance is 0.14
}

TEST_F(CliOnCora, TrainTaskLinkSplitsTheEdgesAndReportsHitsAndMrr) {
  const auto metrics = scratch("link-metrics.json");
  const auto checkpoint = scratch("link-checkpoint");
  const std::string base = "train --quiet " + native_.string() +
                           " --task link --fanouts 5,5 --hidden 16 "
                           "--batch-size 256 --hits-k 20 --ranking-negatives 20 --checkpoint-dir " +
                           checkpoint.string();
  auto r = run(base + " --link-head mlp --epochs 2 --metrics-out " + metrics.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("random link split (seed 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best valid hits@20"), std::string::npos) << r.output;
  const auto json = read_json(metrics);
  EXPECT_EQ(json.at("config").at("task"), "link");
  EXPECT_EQ(json.at("config").at("link_head"), "mlp");
  EXPECT_EQ(json.at("config").at("link_sources").at("exclude"), "reverse");
  ASSERT_EQ(json.at("epochs").size(), 2u);
  for (const auto& e : json.at("epochs"))
    for (const auto* key : {"loss", "valid_hits@20", "test_hits@20", "valid_mrr", "test_mrr"})
      EXPECT_TRUE(e.contains(key)) << key;
  const auto& final_record = json.at("final");
  const auto best = final_record.at("best_epoch").get<std::size_t>();
  EXPECT_EQ(final_record.at("test_mrr"), json.at("epochs")[best - 1].at("test_mrr"));
  // Ranked at random among 20 tails a positive's reciprocal rank averages 0.17.
  EXPECT_GT(final_record.at("test_mrr").get<double>(), 0.25) << r.output;

  r = run(base + " --link-head mlp --epochs 3 --resume");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("this run: 1 epochs"), std::string::npos) << r.output;
  r = run(base + " --epochs 4 --resume --link-head dot");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("link_head"), std::string::npos) << r.output;
}

// A split stored by split-links trains exactly as the same split made on
// the fly; a stored split of another graph, or both ways of giving one, are
// refused.
TEST_F(CliOnCora, TrainTaskLinkReadsAStoredSplitAsTheOneItWouldMake) {
  const auto stored = scratch("cora-link-split");
  fs::remove_all(stored);
  auto r = run("split-links --quiet " + native_.string() + " " + stored.string() +
               " --link-split 0.1,0.2 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--link-split-dir"), std::string::npos) << r.output;
  for (const auto* file : {"train.npy", "valid.npy", "test.npy", "valid_negatives.npy",
                           "test_negatives.npy", "manifest.json"})
    EXPECT_TRUE(fs::exists(stored / file)) << file;
  const std::string base = "train --quiet " + native_.string() +
                           " --task link --fanouts 5,5 --hidden 16 --batch-size 256 --hits-k 20 "
                           "--ranking-negatives 20 --epochs 2 --seed 3 --metrics-out ";
  const auto made = scratch("link-made.json");
  const auto read = scratch("link-read.json");
  r = run(base + made.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run(base + read.string() + " --link-split-dir " + stored.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("link split " + stored.string()), std::string::npos) << r.output;
  const auto made_epochs = read_json(made).at("epochs");
  const auto read_epochs = read_json(read).at("epochs");
  ASSERT_EQ(made_epochs.size(), 2u);
  ASSERT_EQ(read_epochs.size(), 2u);
  for (std::size_t e = 0; e < 2; ++e)
    for (const auto* key :
         {"loss", "train_acc", "valid_hits@20", "test_hits@20", "valid_mrr", "test_mrr"})
      EXPECT_EQ(made_epochs[e].at(key), read_epochs[e].at(key)) << key << ", epoch " << e + 1;

  r = run(base + read.string() + " --link-split-dir " + stored.string() + " --link-split 0.1,0.2");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("give one of them"), std::string::npos) << r.output;
  const auto small = scratch("small-graph");
  fs::remove_all(small);
  ASSERT_EQ(run("generate csbm " + small.string() + " --nodes 500 --quiet").exit_code, 0);
  r = run("train --quiet " + small.string() + " --task link --fanouts 5,5 --epochs 1 " +
          "--link-split-dir " + stored.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the split is for 2708 vertices; the graph has 500"), std::string::npos)
      << r.output;
}

TEST_F(CliOnCora, TrainTaskOptionsOfTheOtherTaskAreRefused) {
  for (const auto& [arguments, mentions] :
       {std::pair{"--hits-k 10", "--hits-k applies to --task link"},
        std::pair{"--task link --split 0", "--split applies to --task node"},
        std::pair{"--task link --eval sampled", "--eval applies to --task node"},
        std::pair{"--task link --mode full-batch", "--mode minibatch"},
        std::pair{"--task link --link-split 0.1", "--link-split"},
        std::pair{"--task link --link-split 0.6,0.6", "--link-split 0.6,0.6"},
        std::pair{"--task link --neg-mode triplet --neg-ratio 1.5", "--neg-ratio"}}) {
    const auto r = run(std::string("train --quiet ") + native_.string() +
                       " --fanouts 5,5 --hidden 8 --epochs 1 " + arguments);
    EXPECT_NE(r.exit_code, 0) << arguments << "\n" << r.output;
    EXPECT_NE(r.output.find(mentions), std::string::npos) << arguments << "\n" << r.output;
  }
}

// A command writes its output directory whole: one that is, lies inside or
// contains its input would destroy the input, so it is refused first.
TEST_F(CliOnCora, OutputDirectoriesThatAreContainOrLieInsideTheirInputAreRefused) {
  const auto link = scratch("cora-link");
  fs::remove_all(link);
  fs::create_directory_symlink(native_, link);
  for (const auto& [out, how] : {std::pair{native_, "is"}, std::pair{link, "is"},
                                 std::pair{native_ / "parts", "lies inside"},
                                 std::pair{native_.parent_path(), "contains"}}) {
    const auto r = run("partition " + native_.string() + " " + out.string() + " --parts 2 --quiet");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(fmt::format("OUT_DIR {} {} the input DATA", out.string(), how)),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(fs::exists(native_ / "parts"));
  EXPECT_EQ(run("info " + native_.string()).exit_code, 0);

  const auto raw = scratch("not-raw");
  fs::create_directories(raw);
  { std::ofstream(raw / "keep") << "kept"; }
  auto r = run("convert " + raw.string() + " " + raw.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the input OGB_DIR"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(raw / "keep"));

  r = run("train --quiet " + native_.string() + " --epochs 1 --checkpoint-dir " +
          (native_ / "checkpoints").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--checkpoint-dir"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(native_ / "checkpoints"));
  fs::remove(link);
}

TEST_F(CliOnCora, TrainTakesItsLayersFromModelApartFromTheSampler) {
  const auto metrics = scratch("model-metrics.json");
  const std::string base = "train --quiet " + native_.string() +
                           " --fanouts 64,64 --hidden 16 --epochs 1 --max-minibatches 2";
  auto r = run(base + " --sampler ladies --model sage --metrics-out " + metrics.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_json(metrics).at("config").at("model"), "sage");
  r = run(base + " --sampler sage --model gcn");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--model gcn: the layer keeps the weights a sampler computes"),
            std::string::npos)
      << r.output;
  // Weighted layers keep the weights of their own sampler only.
  const std::string saint =
      "train --quiet " + native_.string() +
      " --sampler saint-rw --fanouts -1,-1 --hidden 16 --epochs 1 --model gcn";
  for (const std::string& mismatch : {base + " --sampler ladies --model graph-conv", saint}) {
    r = run(mismatch);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("blocks are made for"), std::string::npos) << r.output;
  }
  r = run(base + " --model gat");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--model"), std::string::npos) << r.output;
}

// The shadow sampler's depth is chosen apart from its hops: a model deeper
// or shallower than the fanouts trains, sample reports its blocks, and
// another sampler still refuses a depth that is not its hop count.
TEST_F(CliOnCora, ShadowTrainsAtADepthApartFromItsHops) {
  for (const int layers : {1, 4}) {
    const auto metrics = scratch(fmt::format("shadow-{}.json", layers));
    const auto r = run(fmt::format(
        "train --quiet {} --sampler shadow --fanouts 5,5 --layers {} --hidden 16 --epochs 1 "
        "--max-minibatches 2 --metrics-out {}",
        native_.string(), layers, metrics.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_json(metrics).at("config").at("layers"), layers);
    const auto sampled = scratch(fmt::format("shadow-sample-{}.json", layers));
    ASSERT_EQ(run(fmt::format("sample --quiet {} --sampler shadow --fanouts 5,5 --layers {} "
                              "--max-minibatches 2 --metrics-out {}",
                              native_.string(), layers, sampled.string()))
                  .exit_code,
              0);
    EXPECT_EQ(read_json(sampled).at("layers"), layers);
  }
  const auto r =
      run("sample --quiet " + native_.string() + " --sampler labor --fanouts 5,5 --layers 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--layers 3: the labor sampler makes one block per hop"),
            std::string::npos)
      << r.output;
}

// A sampler program written as LADIES samples and trains as --sampler ladies
// does, and a bad program is refused naming its file.
TEST_F(CliOnCora, ASamplerProgramRunsAsTheSamplerItIsWrittenAs) {
  const std::string ladies = std::string(BULKGNN_PROGRAM_EXAMPLES) + "/ladies.json";
  EXPECT_EQ(sample_digest("--sampler-program " + ladies + " --fanouts 256,256 --bulk 3"),
            sample_digest("--sampler ladies --fanouts 256,256 --bulk 5"));
  std::vector<std::string> finals;
  for (const std::string& sampler :
       {std::string("--sampler ladies"), "--sampler-program " + ladies}) {
    const auto metrics = scratch("program-train.json");
    const auto r =
        run(fmt::format("train --quiet {} {} --fanouts 256,256 --hidden 16 --epochs 2 "
                        "--metrics-out {}",
                        native_.string(), sampler, metrics.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    finals.push_back(read_json(metrics).at("final").dump());
  }
  EXPECT_EQ(finals[0], finals[1]);

  const auto bad = scratch("bad-program.json");
  std::ofstream(bad) << R"({"format": "bulkgnn-sampler-program", "version": 1, "name": "bad",
      "layer": "sage", "hop": [{"op": "frontier_rows", "out": "rows"},
      {"op": "relabel", "drawn": "rows", "out": "s", "block": "b"}],
      "sources": "s", "block": "b"})";
  for (const auto& [arguments, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--sampler-program " + bad.string(),
            bad.string() + ": sampler program 'bad', hop step 1 (relabel): drawn 'rows'"},
           {"--sampler-program " + (bad.string() + ".missing"), "cannot read the file"},
           {"--sampler-program " + ladies + " --sampler sage", "excludes"}}) {
    const auto r = run("sample --quiet " + native_.string() + " --fanouts 5 " + arguments);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  }
}

TEST_F(CliOnCora, TrainRefusesSampleOnCudaWithoutDeviceCuda) {
  const std::string base = "train --quiet " + native_.string() + " --fanouts 5,5 --epochs 1";
  auto r = run(base + " --sample-on cuda");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--sample-on cuda: sampling follows --device cpu"), std::string::npos)
      << r.output;
  r = run(base + " --sample-on gpu");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--sample-on"), std::string::npos) << r.output;
}

TEST_F(CliOnCora, TrainResumeRefusesMissingAndForeignCheckpoints) {
  const auto dir = scratch("train-ckpt");
  fs::remove_all(dir);
  const std::string base = "train --quiet " + native_.string() +
                           " --fanouts 5,5 --hidden 16 --batch-size 64 --checkpoint-dir " +
                           dir.string();
  auto r = run(base + " --epochs 1 --resume");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no checkpoint"), std::string::npos) << r.output;
  ASSERT_EQ(run(base + " --epochs 1").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "checkpoint.bin"));
  r = run(base + " --epochs 2 --resume --lr 0.1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("lr"), std::string::npos) << r.output;
  r = run(base + " --epochs 2 --resume --normalize-features row");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("normalize_features"), std::string::npos) << r.output;
  r = run(base + " --epochs 2 --resume");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("epoch   2/2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("epoch   1/2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trained 2 epochs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("this run: 1 epochs"), std::string::npos) << r.output;
}

class CliTrainRejectsBadOptions : public CliOnCora,
                                  public ::testing::WithParamInterface<bad_option> {};

TEST_P(CliTrainRejectsBadOptions, WithAOneLineErrorNamingTheOption) {
  const auto r = run("train --quiet " + native_.string() + " " + GetParam().arguments);
  EXPECT_EQ(r.exit_code, 2) << r.output;  // a usage error
  EXPECT_NE(r.output.find(GetParam().mentions), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Train, CliTrainRejectsBadOptions,
    ::testing::Values(bad_option{"--dropout 1.5", "--dropout"}, bad_option{"--lr -1", "--lr"},
                      bad_option{"--lr nan", "--lr"}, bad_option{"--hidden 0", "--hidden"},
                      bad_option{"--layers 3 --fanouts 5,5", "--layers"},
                      bad_option{"--epochs 0", "--epochs"}, bad_option{"--eval magic", "--eval"},
                      bad_option{"--ready-queue 0", "--ready-queue"},
                      bad_option{"--resume", "--checkpoint-dir"},
                      bad_option{"--layers 0", "--layers"}, bad_option{"--threads 0", "--threads"},
                      bad_option{"--weight-decay nan", "--weight-decay"},
                      bad_option{"--dropout inf", "--dropout"},
                      bad_option{"--normalize-features column", "--normalize-features"},
                      bad_option{"--partition foo", "--partition"},
                      bad_option{"--feature-replication 0", "--feature-replication"},
                      bad_option{"--mode full-batch --walk-length 3", "--walk-length"},
                      bad_option{"--mode full-batch --subgraph-cache /tmp/unused",
                                 "--subgraph-cache applies to --mode minibatch"},
                      bad_option{"--sampler sage --subgraph-cache /tmp/unused",
                                 "--subgraph-cache does not apply to the sage sampler"},
                      // Four layers of 2^20 × 2^20 weights: more memory than any machine has.
                      bad_option{"--hidden 1048576 --fanouts 2,2,2,2", "--hidden 1048576"}),
    test_name_from_arguments);

TEST(Cli, TrainNeedsFeaturesAndLabels) {
  const auto dir = scratch("rmat-unlabelled");
  ASSERT_EQ(run("generate rmat --quiet --scale 8 --edge-factor 4 " + dir.string()).exit_code, 0);
  const auto r = run("train --quiet " + dir.string() + " --fanouts 5,5 --epochs 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("the dataset has no labels to train on"), std::string::npos) << r.output;
  // Link prediction needs no labels, but features or a learned embedding,
  // and says so before splitting.
  const auto link = run("train --quiet " + dir.string() + " --task link --fanouts 5,5 --epochs 1");
  EXPECT_NE(link.exit_code, 0);
  EXPECT_NE(link.output.find("no node features; learn an input embedding per vertex instead "
                             "(--node-embedding"),
            std::string::npos)
      << link.output;
  EXPECT_EQ(link.output.find("random link split"), std::string::npos) << link.output;
  const auto embedded = run("train " + dir.string() +
                            " --task link --fanouts 5,5 --epochs 1 --hits-k 10 --node-embedding 8");
  EXPECT_EQ(embedded.exit_code, 0) << embedded.output;
  EXPECT_NE(embedded.output.find("no features: a learned 8-wide embedding per vertex"),
            std::string::npos)
      << embedded.output;
  const auto large = scratch("rmat-large-unlabelled");
  ASSERT_EQ(run("generate rmat --quiet --scale 20 --edge-factor 1 " + large.string()).exit_code, 0);
  // 2^20 vertices × 65,536 columns × 16 bytes: 1 TiB, more than any test machine has.
  const auto too_wide = run("train --quiet " + large.string() +
                            " --task link --fanouts 5,5 --epochs 1 --node-embedding 65536");
  EXPECT_NE(too_wide.exit_code, 0);
  EXPECT_NE(too_wide.output.find("--node-embedding 65536: 1048576 vertices make a table"),
            std::string::npos)
      << too_wide.output;
  const auto node = run("train --quiet " + dir.string() + " --fanouts 5,5 --node-embedding 8");
  EXPECT_NE(node.output.find("the dataset has no labels to train on"), std::string::npos)
      << node.output;
  const auto with_features = scratch("rmat-features-unlabelled");
  ASSERT_EQ(
      run("generate rmat --quiet --scale 8 --edge-factor 4 --features 8 " + with_features.string())
          .exit_code,
      0);
  const auto unlabelled = run("train --quiet " + with_features.string() +
                              " --task link --fanouts 5,5 --epochs 1 --hits-k 10");
  EXPECT_EQ(unlabelled.exit_code, 0) << unlabelled.output;
  const auto both = run("train --quiet " + with_features.string() +
                        " --task link --fanouts 5,5 --epochs 1 --node-embedding 8");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.output.find("has 8 node features, which the model reads"), std::string::npos)
      << both.output;
}

// Node classification where only the edges tell the classes apart: the
// model learns a row per vertex, says so, and is refused before start-up
// where the table cannot be trained.
TEST(Cli, TrainLearnsAnEmbeddingOnAGraphWithoutFeatures) {
  const auto dir = scratch("csbm-featureless");
  ASSERT_EQ(run("generate csbm --quiet --nodes 2000 --features 0 " + dir.string()).exit_code, 0);
  const auto plain = run("train --quiet " + dir.string() + " --fanouts 5,5 --epochs 1");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.output.find("learn an embedding per vertex instead: --node-embedding"),
            std::string::npos)
      << plain.output;
  EXPECT_EQ(plain.output.find("sampling, gathering and training"), std::string::npos)
      << "refused before the run starts";
  const auto embedded = run("train " + dir.string() +
                            " --fanouts 5,5 --batch-size 64 --epochs 4 --lr 0.03 "
                            "--node-embedding 16");
  EXPECT_EQ(embedded.exit_code, 0) << embedded.output;
  EXPECT_NE(embedded.output.find("no features: a learned 16-wide embedding per vertex"),
            std::string::npos)
      << embedded.output;
  const std::string best_valid = "best valid accuracy ";
  const auto best = embedded.output.find(best_valid);
  ASSERT_NE(best, std::string::npos) << embedded.output;
  EXPECT_GE(std::stod(embedded.output.substr(best + best_valid.size())), 0.9)
      << "four classes, chance 0.25: " << embedded.output;
  for (const auto& [options, named] :
       {std::pair<std::string, std::string>{"--mode full-batch",
                                            "--node-embedding applies to "
                                            "--mode minibatch"},
        {"--normalize-features row", "--normalize-features: a learned embedding"}}) {
    const auto r = run("train --quiet " + dir.string() + " --node-embedding 8 " + options);
    EXPECT_NE(r.exit_code, 0) << options;
    EXPECT_NE(r.output.find(named), std::string::npos) << r.output;
  }
}

TEST(Cli, MissingDataDirectoryIsAClearError) {
  const auto r = run("sample --quiet /nonexistent/dataset");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("/nonexistent/dataset"), std::string::npos) << r.output;
}

TEST(Cli, MalformedEdgeFileNamesTheFileAndLine) {
  const auto dir = scratch("bad-ogb");
  write_gz(dir / "raw" / "num-node-list.csv.gz", "4\n");
  write_gz(dir / "raw" / "edge.csv.gz", "0,1\n1,2,3\n");
  const auto r = run("convert --quiet " + dir.string() + " " + scratch("bad-out").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("edge.csv.gz:2"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(scratch("bad-out")));
}

TEST(Cli, GeneratedRmatGraphSamples) {
  const auto dir = scratch("rmat");
  ASSERT_EQ(run("generate rmat --quiet --scale 10 --edge-factor 8 " + dir.string()).exit_code, 0);
  const auto r = run("sample --quiet " + dir.string() + " --fanouts 5,5 --batch-size 100");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("digest"), std::string::npos);
}

TEST(Cli, GeneratedWeightsServeWeightedSampling) {
  const auto dir = scratch("rmat-weighted");
  ASSERT_EQ(
      run("generate rmat --quiet --weights --scale 10 --edge-factor 8 " + dir.string()).exit_code,
      0);
  const auto r =
      run("sample --quiet " + dir.string() + " --weighted --fanouts 5,5 --batch-size 100");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("digest"), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const auto* cmd : {"sample", "train", "convert", "info", "model", "generate",
                          "generate rmat", "generate csbm"}) {
    const auto r = run(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << cmd << ": " << r.output;
  }
}

TEST(Cli, ExitStatusSaysOkErrorOrUsageError) {
  auto r = run("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run("");  // no command
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("bulkgnn: error: ", 0), 0u) << r.output;
  r = run("train --no-such-option");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("bulkgnn: error: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("--no-such-option"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bulkgnn train --help"), std::string::npos) << r.output;
  r = run("info /nonexistent/dataset");  // a good command line, a failing run
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

TEST(Cli, ModelRejectsImpossibleNumbers) {
  const std::string base = "model --nodes 1000 --edges 5000 ";
  for (const auto& [arguments, mentions] : std::vector<std::pair<std::string, std::string>>{
           {"--ranks 0,-4", "--ranks"},
           {"--ranks ''", "--ranks"},
           {"--nodes -5", "--nodes"},
           {"--hidden 0", "--hidden"},
           {"--degree-second-moment nan", "--degree-second-moment"},
           {"--grid 4d", "--grid"},
           {"--fanouts 3,0", "--fanouts"}}) {
    const auto r = run(base + arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.output;
    EXPECT_NE(r.output.find(mentions), std::string::npos) << arguments << ": " << r.output;
  }
}

// A file where a directory must be: every output path is refused before the
// command reads or computes anything.
TEST(Cli, OutputPathsAreCheckedBeforeAnyWork) {
  const auto file = scratch("a-file");
  std::ofstream(file) << "x";
  const auto under_file = (file / "out").string();
  const auto cora = (shared_data / "cora").string();
  for (const auto& [arguments, mentions] : std::vector<std::pair<std::string, std::string>>{
           {"train --quiet " + cora + " --epochs 1 --metrics-out " + under_file, "--metrics-out"},
           {"train --quiet " + cora + " --epochs 1 --checkpoint-dir " + file.string(),
            "--checkpoint-dir"},
           {"sample --quiet " + cora + " --dump " + under_file, "--dump"},
           {"sample --quiet " + cora + " --metrics-out " + scratch("").string(), "--metrics-out"},
           {"model --nodes 100 --edges 500 --metrics-out " + under_file, "--metrics-out"},
           {"convert --quiet " + cora + " " + under_file, "OUT_DIR"},
           {"generate csbm --quiet --nodes 100 " + under_file, "OUT_DIR"}}) {
    const auto r = run(arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.output;
    EXPECT_NE(r.output.find(mentions), std::string::npos) << arguments << ": " << r.output;
    EXPECT_EQ(r.output.find("epoch"), std::string::npos) << arguments << ": " << r.output;
    EXPECT_EQ(r.output.find("sampled"), std::string::npos) << arguments << ": " << r.output;
  }
}

TEST(Cli, InfoTakesQuiet) {
  const auto r = run("info --quiet " + (shared_data / "cora").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2708"), std::string::npos) << r.output;
}

}  // namespace

namespace {

TEST(Cli, AManifestFieldOfTheWrongTypeNamesTheManifest) {
  const auto dir = scratch("wrong-type");
  ASSERT_EQ(run("generate csbm --quiet --nodes 200 " + dir.string()).exit_code, 0);
  auto manifest = read_json(dir / "manifest.json");
  manifest["name"] = 5;
  std::ofstream(dir / "manifest.json") << manifest.dump();
  const auto r = run("info " + dir.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("manifest.json"), std::string::npos) << r.output;
}

TEST(Cli, AGraphTooLargeForInt32IdsIsRejected) {
  const auto dir = scratch("too-many-nodes");
  ASSERT_EQ(run("generate csbm --quiet --nodes 200 " + dir.string()).exit_code, 0);
  auto manifest = read_json(dir / "manifest.json");
  manifest["num_nodes"] = std::int64_t{1} << 31;
  std::ofstream(dir / "manifest.json") << manifest.dump();
  const auto r = run("sample --quiet " + dir.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("32-bit"), std::string::npos) << r.output;
}

}  // namespace
