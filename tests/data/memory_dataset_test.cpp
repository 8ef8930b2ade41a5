#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace bulkgnn::data {
namespace {

// Five nodes; edge i goes from source[i] to target[i].
const std::vector<std::int64_t> source{0, 1, 2, 3, 4, 0, 3, 0};
const std::vector<std::int64_t> target{1, 2, 3, 4, 0, 2, 2, 2};
const std::vector<float> weight{1, 2, 3, 4, 5, 6, 7, 8};

memory_arrays edge_list() {
  memory_arrays a;
  a.num_nodes = 5;
  a.edge_list = true;
  a.source = source;
  a.target = target;
  return a;
}

std::string message_of(const memory_arrays& a) {
  try {
    (void)dataset::from_memory(a);
  } catch (const error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(MemoryDataset, AnEdgeListBecomesTheInNeighbourCsrWithItsWeights) {
  auto a = edge_list();
  a.edge_weight = weight;
  const auto ds = dataset::from_memory(a);
  const auto g = ds.graph();
  // Row 2 gets the sources 1, 0, 3, 0 (weights 2, 6, 7, 8): sorted by source,
  // equal sources in edge order.
  EXPECT_EQ(std::vector<edge_t>(g.indptr.begin(), g.indptr.end()),
            (std::vector<edge_t>{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(std::vector<vertex_t>(g.indices.begin(), g.indices.end()),
            (std::vector<vertex_t>{4, 0, 0, 0, 1, 3, 2, 3}));
  EXPECT_EQ(std::vector<float>(g.values.begin(), g.values.end()),
            (std::vector<float>{5, 1, 6, 8, 2, 7, 3, 4}));
  // Each entry's edge: the weights above are edge i's i + 1.
  EXPECT_EQ(std::vector<std::int64_t>(ds.edge_numbers().begin(), ds.edge_numbers().end()),
            (std::vector<std::int64_t>{4, 0, 5, 7, 1, 6, 2, 3}));
}

TEST(MemoryDataset, EachEntryKnowsItsEdgeWithOrWithoutWeightsAndInverses) {
  for (const bool inverse : {false, true}) {
    auto a = edge_list();
    a.add_inverse_edges = inverse;
    const auto ds = dataset::from_memory(a);
    const auto g = ds.graph();
    const auto numbers = ds.edge_numbers();
    ASSERT_EQ(std::ssize(numbers), g.nnz());
    for (std::int64_t row = 0; row < g.rows; ++row)
      for (edge_t e = g.indptr[row]; e < g.indptr[row + 1]; ++e) {
        const auto i = static_cast<std::size_t>(numbers[static_cast<std::size_t>(e)]);
        const bool forward = source[i] == g.indices[e] && target[i] == row;
        const bool reverse = target[i] == g.indices[e] && source[i] == row;
        EXPECT_TRUE(forward || (inverse && reverse)) << "entry " << e;
      }
  }
  // An edge list already in CSR order (by target, then source; a repeated
  // edge included) numbers its entries by position, so it keeps no numbers;
  // one pair out of order and it does.
  memory_arrays sorted = edge_list();
  const std::vector<std::int64_t> sorted_source{4, 0, 0, 0, 1, 3, 2, 3};
  const std::vector<std::int64_t> sorted_target{0, 1, 2, 2, 2, 2, 3, 4};
  sorted.source = sorted_source;
  sorted.target = sorted_target;
  sorted.edge_weight = weight;
  const auto in_order = dataset::from_memory(sorted);
  EXPECT_TRUE(in_order.edge_numbers().empty());
  const auto g = in_order.graph();
  EXPECT_EQ(std::vector<edge_t>(g.indptr.begin(), g.indptr.end()),
            (std::vector<edge_t>{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(std::vector<vertex_t>(g.indices.begin(), g.indices.end()),
            (std::vector<vertex_t>{4, 0, 0, 0, 1, 3, 2, 3}));
  EXPECT_EQ(std::vector<float>(g.values.begin(), g.values.end()), weight);
  sorted.add_inverse_edges = true;
  EXPECT_EQ(std::ssize(dataset::from_memory(sorted).edge_numbers()), 16);
  sorted.add_inverse_edges = false;
  const std::vector<std::int64_t> swapped_source{4, 0, 0, 1, 0, 3, 2, 3};
  sorted.source = swapped_source;
  EXPECT_EQ(std::ssize(dataset::from_memory(sorted).edge_numbers()), 8);
  // CSR given as it is: an entry's number is its position.
  const std::vector<edge_t> indptr{0, 1, 1};
  const std::vector<vertex_t> indices{1};
  memory_arrays csr;
  csr.num_nodes = 2;
  csr.indptr = indptr;
  csr.indices = indices;
  EXPECT_TRUE(dataset::from_memory(csr).edge_numbers().empty());
}

TEST(MemoryDataset, InverseEdgesAddEveryReverse) {
  auto a = edge_list();
  a.add_inverse_edges = true;
  const auto ds = dataset::from_memory(a);
  const auto g = ds.graph();
  EXPECT_EQ(g.nnz(), 16);
  // Row 0: sources of the edges into 0 (4) and targets of the edges out of 0
  // (1, 2, 2).
  EXPECT_EQ(std::vector<vertex_t>(g.row(0).begin(), g.row(0).end()),
            (std::vector<vertex_t>{1, 2, 2, 4}));
}

TEST(MemoryDataset, ViewsTheCallersFeaturesAndKeepsTheirOwner) {
  auto features = std::make_shared<std::vector<float>>(15, 0.5f);
  auto a = edge_list();
  a.features = {5, 3, *features};
  a.owner = features;
  const auto ds = dataset::from_memory(a);
  EXPECT_EQ(ds.features().data.data(), features->data());
  const std::weak_ptr<std::vector<float>> watched = features;
  features.reset();
  a = {};
  EXPECT_FALSE(watched.expired());  // the dataset keeps it
}

TEST(MemoryDataset, RefusesWhatAFileWouldBeRefusedFor) {
  auto a = edge_list();
  const std::vector<std::int64_t> far_target{1, 9};
  a.source = std::span(source).first(2);
  a.target = far_target;
  EXPECT_NE(message_of(a).find("edge_index (in memory): edge 1 (1 -> 9)"), std::string::npos);

  a = edge_list();
  const std::vector<std::int32_t> labels{0, 1, 7};
  a.labels = labels;
  EXPECT_NE(message_of(a).find("labels (in memory): has 3 entries for 5 nodes"), std::string::npos);

  a = edge_list();
  const std::vector<std::int32_t> bad_labels{0, 1, 2, -2, 0};
  a.labels = bad_labels;
  a.num_classes = 3;
  EXPECT_NE(message_of(a).find("labels (in memory): label -2 of node 3"), std::string::npos);

  const std::vector<vertex_t> train{0, 1}, valid{1}, none;
  a = edge_list();
  a.splits = {{"main", train, valid, none}};
  EXPECT_NE(message_of(a).find("node 1 (entry 0) is also in train.npy"), std::string::npos);

  a = {};
  const std::vector<edge_t> indptr{0, 2, 2};
  const std::vector<vertex_t> unsorted{1, 0};
  a.indptr = indptr;
  a.indices = unsorted;
  EXPECT_NE(message_of(a).find("indices (in memory): row 0 is not sorted"), std::string::npos);
  const std::vector<edge_t> short_indptr{0, 1, 3};
  a.indptr = short_indptr;
  EXPECT_NE(message_of(a).find("indptr (in memory): starts at 0 and ends at 3"), std::string::npos);
}

TEST(MemoryDataset, RefusesFeaturesWhoseValuesAreNotTheirShape) {
  auto a = edge_list();
  const std::vector<float> values(14, 0.0f);
  a.features = {5, 3, values};
  EXPECT_NE(message_of(a).find("features (in memory): holds 14 values for 5 x 3"),
            std::string::npos);
}

TEST(MemoryDataset, RefusesTwoGraphsOrNone) {
  auto a = edge_list();
  const std::vector<edge_t> indptr{0, 0, 0, 0, 0, 0};
  a.indptr = indptr;
  EXPECT_THROW((void)dataset::from_memory(a), option_error);
  EXPECT_THROW((void)dataset::from_memory(memory_arrays{}), option_error);
}

TEST(MemoryDataset, AnEmptyEdgeListIsAGraphWithoutEdges) {
  memory_arrays a;
  a.num_nodes = 3;
  a.edge_list = true;
  const auto ds = dataset::from_memory(a);
  EXPECT_EQ(ds.num_nodes(), 3);
  EXPECT_EQ(ds.num_edges(), 0);
}

TEST(MemoryDataset, RefusesALabelThatLeavesNoClassCount) {
  memory_arrays a = edge_list();
  const std::vector<std::int32_t> labels{0, 1, 2, 3, std::numeric_limits<std::int32_t>::max()};
  a.labels = labels;
  EXPECT_NE(message_of(a).find("labels (in memory): label 2147483647 is too large"),
            std::string::npos);
}

}  // namespace
}  // namespace bulkgnn::data
