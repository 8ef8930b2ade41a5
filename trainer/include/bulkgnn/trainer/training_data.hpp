#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace bulkgnn::trainer {

// What a training run reads of its dataset: a whole dataset, or one rank's
// part of a partitioned dataset, whose graph and feature rows the run then
// reaches only through the data-parallel row source and feature fetcher
// (train_options::parallel). Views: the dataset outlives the run.
struct training_data {
  std::string name;
  std::int64_t num_nodes = 0;
  edge_t num_edges = 0;
  bool whole = true;                 // false: graph and features are empty
  csr_view graph;                    // the whole graph
  dense_view<const float> features;  // every vertex's row
  std::int64_t feature_dim = 0;
  std::span<const std::int32_t> labels;  // every vertex's (-1: none)
  int num_classes = 0;
  std::function<const data::split&(const std::string&)> find_split;
  // A part's --normalize-features row factors, gathered over the ranks
  // (row_normalizer_of_parts); unset for a whole dataset.
  std::function<loader::row_normalizer(comm::communicator&)> normalizer_of_parts;
};

// The factors of --normalize-features row of a partitioned dataset, bit for
// bit the whole dataset's (collective over `ranks`, at least one per part):
// rank k < parts maps part k's feature rows for the while and computes their
// minimum and divisors; an all-reduce gives the shift, an all-gather the
// divisors, which every rank places by the owner map (4 bytes per vertex).
[[nodiscard]] loader::row_normalizer row_normalizer_of_parts(const data::dataset_shard& shard,
                                                             comm::communicator& ranks);

[[nodiscard]] training_data whole_dataset(const data::dataset& ds);
// A dataset of one part is whole: that part is the graph.
[[nodiscard]] training_data part_of_dataset(const data::dataset_shard& shard);

}  // namespace bulkgnn::trainer
