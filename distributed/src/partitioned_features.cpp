#include "bulkgnn/distributed/partitioned_features.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>

namespace bulkgnn::distributed {

namespace {
std::unique_ptr<comm::communicator> group_of(const comm::communicator& features_comm,
                                             int replication) {
  BULKGNN_EXPECTS(replication >= 1 && features_comm.size() % replication == 0,
                  "cluster_options.feature_replication {} must divide the {} ranks", replication,
                  features_comm.size());
  const int group_size = features_comm.size() / replication;
  return features_comm.split(features_comm.rank() / group_size, features_comm.rank() % group_size,
                             features_comm.stage());
}
}  // namespace

partitioned_features::partitioned_features(const comm::communicator& features_comm,
                                           dense_view<const float> features,
                                           const vertex_partition& partition, int replication)
    : group_(group_of(features_comm, replication)), partition_(partition), columns_(features.cols) {
  BULKGNN_EXPECTS(partition.parts == group_->size(),
                  "features: the partition has {} parts for groups of {} ranks", partition.parts,
                  group_->size());
  BULKGNN_EXPECTS(partition.num_vertices() == features.rows,
                  "features: {} rows for a partition of {} vertices", features.rows,
                  partition.num_vertices());
  const int part = group_->rank();
  const auto first = partition.part_offsets[part];
  const auto count = partition.part_size(part);
  rows_.resize(static_cast<std::size_t>(count * columns_));
  for (std::int64_t i = 0; i < count; ++i) {
    const auto row = features.row(partition.old_id[first + i]);
    std::copy(row.begin(), row.end(), rows_.begin() + i * columns_);
  }
}

std::int64_t partitioned_features::local_rows() const {
  return columns_ > 0 ? static_cast<std::int64_t>(rows_.size()) / columns_ : 0;
}

void partitioned_features::fetch(std::span<const vertex_t> vertices, dense_view<float> out) {
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(vertices.size()) && out.cols == columns_,
                  "features: fetching {} rows into a {}x{} buffer", vertices.size(), out.rows,
                  out.cols);
  const int members = group_->size();
  std::vector<std::vector<vertex_t>> requests(members);
  for (const vertex_t v : vertices) {
    BULKGNN_EXPECTS(v >= 0 && v < partition_.num_vertices(), "features: vertex {} out of range", v);
    requests[partition_.owner[v]].push_back(v);
  }
  const auto asked = group_->all_to_all(requests);
  std::vector<std::vector<float>> replies(members);
  for (int r = 0; r < members; ++r) {
    replies[r].reserve(asked[r].size() * static_cast<std::size_t>(columns_));
    for (const vertex_t v : asked[r]) {
      const auto first = rows_.begin() + partition_.local_index[v] * columns_;
      replies[r].insert(replies[r].end(), first, first + columns_);
    }
  }
  const auto answered = group_->all_to_all(replies);
  std::vector<std::size_t> cursor(members, 0);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const int owner = partition_.owner[vertices[i]];
    const auto first = answered[owner].begin() + static_cast<std::ptrdiff_t>(cursor[owner]);
    std::copy(first, first + columns_, out.row(static_cast<std::int64_t>(i)).begin());
    cursor[owner] += static_cast<std::size_t>(columns_);
  }
}

}  // namespace bulkgnn::distributed
