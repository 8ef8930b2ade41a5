#include "bulkgnn/data/partitioned_dataset.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/generators.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;

// A weighted R-MAT graph with features, labels and a split.
dataset small_dataset(const fs::path& dir) {
  generate_rmat(
      dir,
      {.scale = 10, .edge_factor = 8, .features = 5, .classes = 3, .weights = true, .quiet = true});
  return dataset::open(dir);
}

// A random owner per vertex, so that parts are interleaved id ranges.
std::vector<std::int32_t> random_owners(std::int64_t n, int parts, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, parts - 1);
  std::vector<std::int32_t> owner(static_cast<std::size_t>(n));
  for (auto& o : owner) o = pick(rng);
  return owner;
}

template <class T>
std::vector<T> to_vector(std::span<const T> s) {
  return {s.begin(), s.end()};
}

class partitioned_dataset_test : public ::testing::Test {
 protected:
  bulkgnn::testing::scratch_dir dir_;
  dataset ds_ = small_dataset(dir_ / "whole");
  std::vector<std::int32_t> owner_ = random_owners(ds_.num_nodes(), 3, 7);
  fs::path parted_ = dir_ / "parted";

  void SetUp() override {
    write_partitioned_dataset(ds_, owner_, 3, {.method = "test", .seed = 0, .edge_cut = 0},
                              parted_);
  }
};

TEST_F(partitioned_dataset_test, EachPartHoldsItsVerticesRowsAndFeaturesInIdOrder) {
  ASSERT_TRUE(is_partitioned_dataset(parted_));
  EXPECT_FALSE(is_partitioned_dataset(dir_ / "whole"));
  EXPECT_EQ(partitioned_dataset_parts(parted_), 3);
  const auto graph = ds_.graph();
  std::int64_t rows_seen = 0;
  for (int part = 0; part < 3; ++part) {
    const auto shard = dataset_shard::open(parted_, part);
    EXPECT_EQ(shard.num_nodes(), ds_.num_nodes());
    EXPECT_EQ(shard.num_edges(), ds_.num_edges());
    EXPECT_EQ(shard.owners(), owner_);
    EXPECT_EQ(to_vector(shard.labels()), to_vector(ds_.labels()));
    EXPECT_EQ(shard.training_vertices(""), ds_.training_vertices(""));
    const auto rows = shard.rows();
    ASSERT_TRUE(rows.weighted());
    EXPECT_EQ(rows.cols, ds_.num_nodes());
    std::int64_t r = 0;
    for (vertex_t v = 0; v < ds_.num_nodes(); ++v) {
      if (owner_[v] != part) continue;
      ASSERT_LT(r, rows.rows);
      EXPECT_EQ(to_vector(rows.row(r)), to_vector(graph.row(v))) << "vertex " << v;
      EXPECT_EQ(to_vector(rows.row_values(r)), to_vector(graph.row_values(v)));
      const auto f = shard.features().row(r);
      const auto expected = ds_.features().row(v);
      EXPECT_TRUE(std::equal(f.begin(), f.end(), expected.begin(), expected.end()));
      ++r;
    }
    EXPECT_EQ(r, rows.rows);
    rows_seen += rows.rows;
  }
  EXPECT_EQ(rows_seen, ds_.num_nodes());
}

TEST_F(partitioned_dataset_test, InDegreesCountEachColumnAndOtherPartsFeaturesAreTheirRows) {
  std::vector<std::int64_t> expected(static_cast<std::size_t>(ds_.num_nodes()), 0);
  for (const vertex_t column : ds_.graph().indices) ++expected[column];
  const auto shard = dataset_shard::open(parted_, 0);
  EXPECT_EQ(shard.in_degrees(), expected);
  const auto other = shard.feature_rows_of(2);
  const auto shard_two = dataset_shard::open(parted_, 2);
  const auto part_two = shard_two.features();
  ASSERT_EQ(other.rows.rows, part_two.rows);
  EXPECT_TRUE(std::equal(other.rows.data.begin(), other.rows.data.end(), part_two.data.begin(),
                         part_two.data.end()));
  EXPECT_EQ(shard.find_split("").train.size(), ds_.find_split("").train.size());
}

TEST_F(partitioned_dataset_test, PartsOfOnePartitionShareAFingerprintThatAnotherDoesNot) {
  const auto first = dataset_shard::open(parted_, 0).fingerprint();
  EXPECT_EQ(dataset_shard::open(parted_, 2).fingerprint(), first);
  write_partitioned_dataset(ds_, random_owners(ds_.num_nodes(), 3, 8), 3,
                            {.method = "test", .seed = 0, .edge_cut = 0}, dir_ / "other");
  EXPECT_NE(dataset_shard::open(dir_ / "other", 0).fingerprint(), first);
}

TEST_F(partitioned_dataset_test, APartOutsideTheDatasetIsRefused) {
  EXPECT_THROW((void)dataset_shard::open(parted_, 3), error);
  EXPECT_THROW((void)dataset_shard::open(parted_, -1), error);
}

// The data_error message of opening `part`, or "" if it opened.
std::string open_error(const fs::path& dir, int part) {
  try {
    (void)dataset_shard::open(dir, part);
  } catch (const data_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(partitioned_dataset_test, AMissingOrCorruptFileOfAPartIsNamedAndOtherPartsStillOpen) {
  fs::remove(parted_ / "part-1" / "indices.npy");
  EXPECT_NE(open_error(parted_, 1).find("part-1/indices.npy"), std::string::npos)
      << open_error(parted_, 1);
  EXPECT_EQ(open_error(parted_, 0), "") << "part 0 reads none of part 1's files";

  const auto indices = npy_array::open(parted_ / "part-2" / "indices.npy");
  std::fstream out(indices.path(), std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(-4, std::ios::end);
  const std::int32_t outside = static_cast<std::int32_t>(ds_.num_nodes());
  out.write(reinterpret_cast<const char*>(&outside), sizeof outside);
  out.close();
  const auto message = open_error(parted_, 2);
  EXPECT_NE(message.find("part-2/indices.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("outside"), std::string::npos) << message;
}

TEST_F(partitioned_dataset_test, OwnersThatDisagreeWithAPartsRowsAreRefused) {
  auto owner = owner_;
  // Vertex 0 moves to another part: its part now has a row too many.
  owner[0] = (owner[0] + 1) % 3;
  const auto a = npy_array::create(parted_ / "owner.npy", dtype::int32, {ds_.num_nodes()});
  std::copy(owner.begin(), owner.end(), a.as<std::int32_t>().begin());
  a.sync();
  const auto message = open_error(parted_, owner_[0]);
  EXPECT_NE(message.find("owner.npy"), std::string::npos) << message;
}

TEST_F(partitioned_dataset_test, ManifestCountsThatDoNotAddUpAreRefused) {
  const auto path = parted_ / "manifest.json";
  auto manifest = nlohmann::json::parse(std::ifstream(path));
  manifest["part_edges"][0] = manifest["part_edges"][0].get<std::int64_t>() + 1;
  std::ofstream(path) << manifest.dump();
  const auto message = open_error(parted_, 1);
  EXPECT_NE(message.find("manifest.json"), std::string::npos) << message;
  EXPECT_NE(message.find("part_edges"), std::string::npos) << message;
}

// A part whose rows hold no entries maps no weights, yet belongs to a weighted
// graph: every rank must agree that it is, or their exchanges differ.
TEST(PartitionedDataset, APartWithoutEntriesOfAWeightedGraphIsWeighted) {
  bulkgnn::testing::scratch_dir dir;
  const auto ds = small_dataset(dir / "whole");
  std::vector<std::int32_t> owner(static_cast<std::size_t>(ds.num_nodes()), 0);
  std::int64_t empty_rows = 0;
  for (vertex_t v = 0; v < ds.num_nodes(); ++v)
    if (ds.graph().degree(v) == 0) {
      owner[v] = 1;
      ++empty_rows;
    }
  ASSERT_GT(empty_rows, 0) << "the R-MAT graph has vertices without in-neighbours";
  write_partitioned_dataset(ds, owner, 2, {.method = "test", .seed = 0, .edge_cut = 0},
                            dir / "parted");
  const auto empty = dataset_shard::open(dir / "parted", 1);
  EXPECT_EQ(empty.rows().nnz(), 0);
  EXPECT_TRUE(empty.weighted());
  EXPECT_TRUE(dataset_shard::open(dir / "parted", 0).weighted());
}

TEST(PartitionedDataset, WriterRefusesOwnersOutsideThePartsAndLeavesNothing) {
  bulkgnn::testing::scratch_dir dir;
  const auto ds = small_dataset(dir / "whole");
  auto owner = random_owners(ds.num_nodes(), 2, 1);
  owner[5] = 2;
  EXPECT_THROW(write_partitioned_dataset(ds, owner, 2, {}, dir / "parted"), error);
  EXPECT_FALSE(fs::exists(dir / "parted"));
}

}  // namespace
}  // namespace bulkgnn::data
