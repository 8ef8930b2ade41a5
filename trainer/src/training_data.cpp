#include "bulkgnn/trainer/training_data.hpp"

#include "bulkgnn/core/error.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace bulkgnn::trainer {

loader::row_normalizer row_normalizer_of_parts(const data::dataset_shard& shard,
                                               comm::communicator& ranks) {
  const int parts = shard.parts();
  BULKGNN_EXPECTS(ranks.size() >= parts,
                  "train_options.normalize_features: {} ranks for a dataset of {} parts",
                  ranks.size(), parts);
  const bool computes = ranks.rank() < parts;
  std::optional<data::mapped_feature_rows> mine;
  if (computes) mine = shard.feature_rows_of(ranks.rank());
  const auto rows = computes ? mine->rows : dense_view<const float>{};
  const float shift =
      ranks.all_reduce(computes && rows.rows > 0 ? loader::row_normalizer::minimum(rows)
                                                 : std::numeric_limits<float>::infinity(),
                       comm::reduce_op::min);
  // Features with no row at all shift by nothing, as the whole dataset's do.
  const float agreed_shift = std::isinf(shift) ? 0.0f : shift;
  const auto divisors_of_part =
      computes ? loader::row_normalizer::row_divisors(rows, agreed_shift) : std::vector<float>{};
  const auto sizes = ranks.all_gather(static_cast<std::int64_t>(divisors_of_part.size()));
  const auto all = ranks.all_gather_v(std::span<const float>(divisors_of_part));
  // Part k's divisors start after those of parts 0 .. k-1 (ranks 0 .. k-1).
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(parts), 0);
  for (int k = 1; k < parts; ++k) cursor[k] = cursor[k - 1] + sizes[k - 1];
  const auto owner = shard.owners();
  std::vector<float> divisors(owner.size());
  for (std::size_t v = 0; v < owner.size(); ++v)
    divisors[v] = all[static_cast<std::size_t>(cursor[owner[v]]++)];
  return {agreed_shift, std::move(divisors)};
}

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
          },
          .normalizer_of_parts = {}};
}

training_data part_of_dataset(const data::dataset_shard& shard) {
  const bool whole = shard.parts() == 1;
  return {
      .name = shard.name(),
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
      },
      .normalizer_of_parts =
          [&shard](comm::communicator& ranks) { return row_normalizer_of_parts(shard, ranks); }};
}

}  // namespace bulkgnn::trainer
