#include "bulkgnn/data/dataset.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>

#include <array>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <tuple>

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;

class dataset_test : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            fmt::format("bulkgnn-dataset-test-{}-{}", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // No temporary siblings may survive a writer, committed or not.
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
};

// A directed 4-cycle 0->1->2->3->0 plus 0->2, so row v lists in-neighbours.
nlohmann::json write_small(native_writer& w, int tag = 0) {
  // The returned arrays own the only mapping: keep each alive while filling it.
  const auto indptr = w.create("indptr.npy", dtype::int64, {5});
  const edge_t ptr[] = {0, 1, 2, 4, 5};
  std::ranges::copy(ptr, indptr.as<edge_t>().begin());
  const auto indices = w.create("indices.npy", dtype::int32, {5});
  const vertex_t idx[] = {3, 0, 0, 1, 2};
  std::ranges::copy(idx, indices.as<vertex_t>().begin());
  const auto features = w.create("features.npy", dtype::float32, {4, 2});
  std::iota(features.as<float>().begin(), features.as<float>().end(), static_cast<float>(tag));
  const auto labels = w.create("labels.npy", dtype::int32, {4});
  const std::int32_t lab[] = {0, 1, -1, 2};
  std::ranges::copy(lab, labels.as<std::int32_t>().begin());
  const auto train = w.create("split/s/train.npy", dtype::int32, {2});
  train.as<vertex_t>()[1] = 1;
  const auto valid = w.create("split/s/valid.npy", dtype::int32, {1});
  valid.as<vertex_t>()[0] = 2;
  w.create("split/s/test.npy", dtype::int32, {0});
  return {{"name", "small"},  {"num_nodes", 4},  {"num_edges", 5},         {"num_features", 2},
          {"num_classes", 3}, {"splits", {"s"}}, {"generator", "by hand"}, {"tag", tag}};
}

TEST_F(dataset_test, CommitMakesTheDirectoryAppearWithEveryArray) {
  const auto out = root_ / "ds";
  {
    native_writer w(out);
    const auto manifest = write_small(w);
    EXPECT_FALSE(fs::exists(out)) << "nothing visible before commit";
    EXPECT_TRUE(fs::is_directory(w.temporary_dir()));
    EXPECT_EQ(w.temporary_dir().parent_path(), root_);
    w.commit(manifest);
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"ds"});
  const auto d = dataset::open_native(out);
  EXPECT_EQ(d.name(), "small");
  EXPECT_EQ(d.num_nodes(), 4);
  EXPECT_EQ(d.num_edges(), 5);
  EXPECT_EQ(find_csr_problem(d.graph()), "");
  EXPECT_EQ(std::vector<vertex_t>(d.graph().row(2).begin(), d.graph().row(2).end()),
            (std::vector<vertex_t>{0, 1}));
  EXPECT_FALSE(d.graph().weighted());
  EXPECT_EQ(d.features().rows, 4);
  EXPECT_EQ(d.features().cols, 2);
  EXPECT_EQ(d.features().row(3)[1], 7.0f);
  EXPECT_EQ(d.labels()[2], -1);
  EXPECT_EQ(d.num_classes(), 3);
  ASSERT_EQ(d.splits().size(), 1u);
  EXPECT_EQ(d.find_split("").name, "s");
  EXPECT_EQ(d.find_split("s").train.size(), 2u);
  EXPECT_EQ(d.find_split("s").train[1], 1);
  EXPECT_EQ(d.find_split("s").valid[0], 2);
  EXPECT_TRUE(d.find_split("s").test.empty());
  EXPECT_THROW((void)d.find_split("nope"), option_error);
  EXPECT_EQ(d.manifest()["format"], "bulkgnn-native");
  EXPECT_EQ(d.manifest()["version"], 1);
  EXPECT_EQ(d.manifest()["generator"], "by hand");
  EXPECT_EQ(d.manifest()["arrays"].size(), 7u);
  EXPECT_NO_THROW(d.validate());
}

TEST_F(dataset_test, DestroyingWithoutCommitLeavesNothing) {
  fs::path tmp;
  {
    native_writer w(root_ / "ds");
    write_small(w);
    tmp = w.temporary_dir();
    EXPECT_TRUE(fs::exists(tmp / "indptr.npy"));
  }
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(entries().empty());
}

TEST_F(dataset_test, AnUncommittedWriterRemovesTheDirectoriesItCreated) {
  {
    native_writer w(root_ / "a" / "b" / "out");
    std::ignore = write_small(w);
    EXPECT_TRUE(fs::is_directory(root_ / "a" / "b"));
  }
  EXPECT_FALSE(fs::exists(root_ / "a"));
  fs::create_directories(root_ / "kept");
  { native_writer w(root_ / "kept" / "new" / "out"); }
  EXPECT_TRUE(fs::is_directory(root_ / "kept"));  // it was there before
  EXPECT_FALSE(fs::exists(root_ / "kept" / "new"));
}

TEST_F(dataset_test, ExceptionDuringWritingLeavesNothing) {
  EXPECT_THROW(
      {
        native_writer w(root_ / "ds");
        write_small(w);
        throw data_error("input.csv", 3, "bad");
      },
      data_error);
  EXPECT_TRUE(entries().empty());
}

TEST_F(dataset_test, CommitReplacesAnExistingDataset) {
  const auto out = root_ / "ds";
  for (int tag : {10, 20}) {
    native_writer w(out);
    w.commit(write_small(w, tag));
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"ds"});
  const auto d = dataset::open_native(out);
  EXPECT_EQ(d.manifest()["tag"], 20);
  EXPECT_EQ(d.features().row(0)[0], 20.0f);
}

TEST_F(dataset_test, RefusesToReplaceAnUnrelatedDirectory) {
  const auto out = root_ / "precious";
  fs::create_directories(out);
  std::ofstream(out / "thesis.tex") << "do not delete";
  native_writer w(out);
  EXPECT_THROW(w.commit(write_small(w)), data_error);
  EXPECT_TRUE(fs::exists(out / "thesis.tex"));
}

TEST_F(dataset_test, MappingsSurviveTheDirectoryBeingRemoved) {
  const auto out = root_ / "ds";
  {
    native_writer w(out);
    w.commit(write_small(w));
  }
  const auto d = dataset::open(out);
  fs::remove_all(out);
  EXPECT_EQ(d.graph().row(0)[0], 3);
  EXPECT_EQ(d.features().row(1)[0], 2.0f);
}

void expect_open_error(const fs::path& dir, const std::string& file, const std::string& fragment) {
  try {
    (void)dataset::open_native(dir);
    ADD_FAILURE() << "no error";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

class broken_dataset_test : public dataset_test {
 protected:
  void SetUp() override {
    dataset_test::SetUp();
    dir_ = root_ / "ds";
    native_writer w(dir_);
    w.commit(write_small(w));
  }
  void edit_manifest(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json m = nlohmann::json::parse(std::ifstream(dir_ / "manifest.json"));
    edit(m);
    std::ofstream(dir_ / "manifest.json") << m.dump();
  }
  void replace_array(const std::string& rel, dtype type, std::vector<std::int64_t> shape) {
    fs::remove(dir_ / rel);
    npy_array::create(dir_ / rel, type, std::move(shape));
  }
  fs::path dir_;
};

TEST_F(broken_dataset_test, MissingManifest) {
  fs::remove(dir_ / "manifest.json");
  expect_open_error(dir_, "manifest.json", "missing");
}

TEST_F(broken_dataset_test, ManifestNotJson) {
  std::ofstream(dir_ / "manifest.json") << "{\"format\": ";
  expect_open_error(dir_, "manifest.json", "invalid JSON");
}

TEST_F(broken_dataset_test, ManifestOfAnotherFormat) {
  edit_manifest([](nlohmann::json& m) { m["format"] = "something-else"; });
  expect_open_error(dir_, "manifest.json", "format");
}

TEST_F(broken_dataset_test, ManifestLacksNodeCount) {
  edit_manifest([](nlohmann::json& m) { m.erase("num_nodes"); });
  expect_open_error(dir_, "manifest.json", "num_nodes");
}

TEST_F(broken_dataset_test, MissingArray) {
  fs::remove(dir_ / "labels.npy");
  expect_open_error(dir_, "labels.npy", "missing");
  // Splits come from "splits", whatever "arrays" says.
  fs::remove(dir_ / "split" / "s" / "valid.npy");
  edit_manifest([](nlohmann::json& m) {
    m["arrays"] = {"indptr.npy", "indices.npy"};
    m["num_features"] = 0;
  });
  expect_open_error(dir_, "valid.npy", "missing");
}

TEST_F(broken_dataset_test, WrongDtype) {
  replace_array("indices.npy", dtype::int64, {5});
  expect_open_error(dir_, "indices.npy", "dtype");
}

TEST_F(broken_dataset_test, WrongShape) {
  replace_array("features.npy", dtype::float32, {4, 3});
  expect_open_error(dir_, "features.npy", "shape");
}

TEST_F(broken_dataset_test, ManifestDisagreesWithArrays) {
  edit_manifest([](nlohmann::json& m) { m["num_edges"] = 6; });
  expect_open_error(dir_, "indices.npy", "shape");
}

TEST_F(broken_dataset_test, IndptrNotEndingAtEdgeCount) {
  const auto a = npy_array::create(dir_ / "indptr.npy", dtype::int64, {5});
  a.as<edge_t>()[4] = 4;
  expect_open_error(dir_, "indptr.npy", "ends at 4");
}

TEST_F(broken_dataset_test, NotAnNpyFile) {
  std::ofstream(dir_ / "labels.npy") << "0\n1\n-1\n2\n";
  expect_open_error(dir_, "labels.npy", "not a .npy file");
}

TEST_F(broken_dataset_test, TruncatedArray) {
  fs::resize_file(dir_ / "features.npy", fs::file_size(dir_ / "features.npy") - 4);
  expect_open_error(dir_, "features.npy", "truncated");
}

// Opening validates every array, so that no command computes on a malformed
// graph (a cost model or a sampler would read out of bounds).
TEST_F(broken_dataset_test, OpeningRefusesAColumnIdOutOfRange) {
  {
    const auto indices = npy_array::create(dir_ / "indices.npy", dtype::int32, {5});
    indices.as<vertex_t>()[3] = 9;
  }
  expect_open_error(dir_, "indices.npy", "node id 9 at entry 3 is outside [0, 4)");
}

TEST_F(broken_dataset_test, OpeningRefusesAnIndptrThatDecreases) {
  {
    const auto indptr = npy_array::create(dir_ / "indptr.npy", dtype::int64, {5});
    const auto p = indptr.as<edge_t>();
    const std::array<edge_t, 5> decreasing{0, 3, 1, 4, 5};
    std::copy(decreasing.begin(), decreasing.end(), p.begin());
  }
  expect_open_error(dir_, "indptr.npy", "decreases at row 1");
}

TEST_F(broken_dataset_test, OpeningRefusesARowWhoseColumnsAreNotSorted) {
  {
    const auto indices = npy_array::create(dir_ / "indices.npy", dtype::int32, {5});
    const std::array<vertex_t, 5> row_two_unsorted{3, 0, 1, 0, 2};
    std::ranges::copy(row_two_unsorted, indices.as<vertex_t>().begin());
  }
  expect_open_error(dir_, "indices.npy", "row 2 is not sorted: column 0 follows 1 (entry 3)");
}

TEST_F(broken_dataset_test, OpeningRefusesEdgeWeightsThatAreNotPositive) {
  edit_manifest([](nlohmann::json& m) { m["arrays"].push_back("edge_weight.npy"); });
  for (const float bad : {-2.0f, 0.0f}) {
    {
      const auto weights = npy_array::create(dir_ / "edge_weight.npy", dtype::float32, {5});
      const std::array<float, 5> values{1.0f, 1.0f, bad, 1.0f, 1.0f};
      std::ranges::copy(values, weights.as<float>().begin());
    }
    expect_open_error(dir_, "edge_weight.npy",
                      fmt::format("weight {} of entry 2 (row 2) is not positive", bad));
  }
}

TEST_F(dataset_test, OpeningAPathThatIsNoDirectorySaysSo) {
  try {
    (void)dataset::open(root_ / "absent");
    ADD_FAILURE() << "no error";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find("absent: no such directory"), std::string::npos)
        << e.what();
  }
  std::ofstream(root_ / "plain") << "a file";
  try {
    (void)dataset::open(root_ / "plain");
    ADD_FAILURE() << "no error";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find("plain: is not a directory"), std::string::npos)
        << e.what();
  }
}

// open() names both layouts it accepts; open_native() the file it lacks.
TEST_F(dataset_test, OpenRejectsADirectoryThatIsNeitherFormat) {
  expect_open_error(root_, "manifest.json", "missing");
  EXPECT_FALSE(is_ogb_raw_dir(root_));
  try {
    (void)dataset::open(root_);
    ADD_FAILURE() << "no error";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find(root_.string() + ": is neither a bulkgnn native "
                                                          "dataset (no manifest.json) nor an OGB "
                                                          "raw directory"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bulkgnn::data
