#include "bulkgnn/trainer/training_data.hpp"

namespace bulkgnn::trainer {

training_data whole_dataset(const data::dataset& ds) {
  return {.name = ds.name(),
          .num_nodes = ds.num_nodes(),
          .num_edges = ds.num_edges(),
          .whole = true,
          .graph = ds.graph(),
          .features = ds.features(),
          .feature_dim = ds.features().cols,
          .labels = ds.labels(),
          .num_classes = ds.num_classes(),
          .find_split = [&ds](const std::string& name) -> const data::split& {
            return ds.find_split(name);
          }};
}

training_data part_of_dataset(const data::dataset_shard& shard) {
  const bool whole = shard.parts() == 1;
  return {.name = shard.name(),
          .num_nodes = shard.num_nodes(),
          .num_edges = shard.num_edges(),
          .whole = whole,
          .graph = whole ? shard.rows() : csr_view{},
          .features = whole ? shard.features() : dense_view<const float>{},
          .feature_dim = shard.feature_dim(),
          .labels = shard.labels(),
          .num_classes = shard.num_classes(),
          .find_split = [&shard](const std::string& name) -> const data::split& {
            return shard.find_split(name);
          }};
}

}  // namespace bulkgnn::trainer
