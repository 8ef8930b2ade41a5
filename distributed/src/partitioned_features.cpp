#include "bulkgnn/distributed/partitioned_features.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <numeric>

namespace bulkgnn::distributed {

cache_choice parse_cache_choice(const std::string& name) {
  if (name == "degree") return cache_choice::by_degree;
  if (name == "access") return cache_choice::by_access;
  if (name == "access-each-epoch") return cache_choice::by_access_each_epoch;
  throw option_error(
      "cluster_options.feature_cache_choice must be degree, access or access-each-epoch; got '" +
      name + "'");
}

std::string cache_choice_name(cache_choice choice) {
  switch (choice) {
    case cache_choice::by_degree:
      return "degree";
    case cache_choice::by_access:
      return "access";
    case cache_choice::by_access_each_epoch:
      return "access-each-epoch";
  }
  return "unknown";
}

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
                                           const vertex_partition& partition, int replication,
                                           const feature_cache_options& cache, csr_view graph)
    : group_(group_of(features_comm, replication)),
      partition_(partition),
      columns_(features.cols),
      choice_(cache.choice) {
  BULKGNN_EXPECTS(partition.parts == group_->size(),
                  "features: the partition has {} parts for groups of {} ranks", partition.parts,
                  group_->size());
  BULKGNN_EXPECTS(partition.num_vertices() == features.rows,
                  "features: {} rows for a partition of {} vertices", features.rows,
                  partition.num_vertices());
  const int part = group_->rank();
  const auto first = partition.part_offsets[part];
  const auto count = partition.part_size(part);
  copied_rows_.resize(static_cast<std::size_t>(count * columns_));
  for (std::int64_t i = 0; i < count; ++i) {
    const auto row = features.row(partition.old_id[first + i]);
    std::copy(row.begin(), row.end(), copied_rows_.begin() + i * columns_);
  }
  rows_ = {count, columns_, std::span<const float>(copied_rows_)};
  start_cache(cache, [&] {
    BULKGNN_EXPECTS(graph.rows == partition.num_vertices(),
                    "features: a cache by degree needs the graph ({} rows for {} vertices)",
                    graph.rows, partition.num_vertices());
    std::vector<std::int64_t> in_degree(static_cast<std::size_t>(graph.rows), 0);
    for (const vertex_t column : graph.indices) ++in_degree[static_cast<std::size_t>(column)];
    return in_degree;
  });
}

partitioned_features::partitioned_features(
    const comm::communicator& features_comm, dense_view<const float> mine,
    const vertex_partition& partition, int replication, const feature_cache_options& cache,
    const std::function<std::vector<std::int64_t>()>& in_degrees)
    : group_(group_of(features_comm, replication)),
      partition_(partition),
      columns_(mine.cols),
      rows_(mine),
      choice_(cache.choice) {
  BULKGNN_EXPECTS(partition.parts == group_->size(),
                  "features: the partition has {} parts for groups of {} ranks", partition.parts,
                  group_->size());
  BULKGNN_EXPECTS(mine.rows == partition.part_size(group_->rank()),
                  "features: {} rows given for part {} of {} vertices", mine.rows, group_->rank(),
                  partition.part_size(group_->rank()));
  start_cache(cache, in_degrees);
}

void partitioned_features::start_cache(
    const feature_cache_options& cache,
    const std::function<std::vector<std::int64_t>()>& in_degrees) {
  BULKGNN_EXPECTS(cache.bytes >= 0, "cluster_options.feature_cache_bytes must be >= 0, got {}",
                  cache.bytes);
  const std::int64_t row_bytes = 4 * std::max<std::int64_t>(columns_, 1);
  cache_capacity_ = std::min(cache.bytes / row_bytes, partition_.num_vertices());
  if (cache_capacity_ == 0) return;
  cache_slot_.assign(static_cast<std::size_t>(partition_.num_vertices()), -1);
  if (choice_ != cache_choice::by_degree) {
    access_counts_.assign(static_cast<std::size_t>(partition_.num_vertices()), 0);
    return;
  }
  fill_cache(hottest_remote(in_degrees()));
}

std::int64_t partitioned_features::local_rows() const { return rows_.rows; }

std::vector<vertex_t> partitioned_features::hottest_remote(
    std::span<const std::int64_t> score) const {
  const int mine = group_->rank();
  std::vector<vertex_t> remote;
  for (std::size_t v = 0; v < score.size(); ++v)
    if (partition_.owner[v] != mine && score[v] > 0) remote.push_back(static_cast<vertex_t>(v));
  const auto keep = std::min<std::size_t>(remote.size(), static_cast<std::size_t>(cache_capacity_));
  const auto hotter = [&](vertex_t a, vertex_t b) {
    return score[a] != score[b] ? score[a] > score[b] : a < b;
  };
  std::partial_sort(remote.begin(), remote.begin() + static_cast<std::ptrdiff_t>(keep),
                    remote.end(), hotter);
  remote.resize(keep);
  std::sort(remote.begin(), remote.end());
  return remote;
}

void partitioned_features::fill_cache(std::vector<vertex_t> chosen) {
  std::fill(cache_slot_.begin(), cache_slot_.end(), -1);
  cached_rows_.assign(chosen.size() * static_cast<std::size_t>(columns_), 0.0F);
  fetch_from_owners(
      chosen, {static_cast<std::int64_t>(chosen.size()), columns_, std::span<float>(cached_rows_)});
  for (std::size_t slot = 0; slot < chosen.size(); ++slot)
    cache_slot_[static_cast<std::size_t>(chosen[slot])] = static_cast<std::int32_t>(slot);
  counts_.cached_rows = static_cast<std::int64_t>(chosen.size());
}

void partitioned_features::end_epoch() {
  ++epochs_ended_;
  if (cache_capacity_ == 0 || choice_ == cache_choice::by_degree) return;
  if (choice_ == cache_choice::by_access && epochs_ended_ > 1) return;
  fill_cache(hottest_remote(access_counts_));
  if (choice_ == cache_choice::by_access)
    access_counts_ = {};  // chosen for good: stop counting
  else
    std::fill(access_counts_.begin(), access_counts_.end(), 0);
}

feature_cache_counts partitioned_features::take_cache_counts() {
  auto taken = counts_;
  counts_ = {.cached_rows = counts_.cached_rows};
  return taken;
}

void partitioned_features::fetch(std::span<const vertex_t> vertices, dense_view<float> out) {
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(vertices.size()) && out.cols == columns_,
                  "features: fetching {} rows into a {}x{} buffer", vertices.size(), out.rows,
                  out.cols);
  for (const vertex_t v : vertices)
    BULKGNN_EXPECTS(v >= 0 && v < partition_.num_vertices(), "features: vertex {} out of range", v);
  const int mine = group_->rank();
  // Rows not cached go to their owners; the rest are copied here.
  std::vector<vertex_t> uncached;
  std::vector<std::size_t> uncached_at;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto v = static_cast<std::size_t>(vertices[i]);
    const bool remote = partition_.owner[v] != mine;
    if (counting_ && remote && !access_counts_.empty()) ++access_counts_[v];
    const std::int32_t slot = cache_slot_.empty() ? -1 : cache_slot_[v];
    if (slot < 0) {
      if (counting_) ++(remote ? counts_.misses : counts_.local);
      uncached.push_back(vertices[i]);
      uncached_at.push_back(i);
      continue;
    }
    if (counting_) {
      ++counts_.hits;
      counts_.bytes_saved += 4 + 4 * columns_;
    }
    const auto first = cached_rows_.begin() + static_cast<std::ptrdiff_t>(slot) * columns_;
    std::copy(first, first + columns_, out.row(static_cast<std::int64_t>(i)).begin());
  }
  if (uncached.size() == vertices.size()) {
    fetch_from_owners(vertices, out);
    return;
  }
  std::vector<float> fetched(uncached.size() * static_cast<std::size_t>(columns_));
  fetch_from_owners(
      uncached, {static_cast<std::int64_t>(uncached.size()), columns_, std::span<float>(fetched)});
  for (std::size_t k = 0; k < uncached.size(); ++k)
    std::copy(fetched.begin() + static_cast<std::ptrdiff_t>(k) * columns_,
              fetched.begin() + static_cast<std::ptrdiff_t>(k + 1) * columns_,
              out.row(static_cast<std::int64_t>(uncached_at[k])).begin());
}

void partitioned_features::fetch_from_owners(std::span<const vertex_t> vertices,
                                             dense_view<float> out) {
  const int members = group_->size();
  std::vector<std::vector<vertex_t>> requests(members);
  for (const vertex_t v : vertices) requests[partition_.owner[v]].push_back(v);
  const auto asked = group_->all_to_all(requests);
  std::vector<std::vector<float>> replies(members);
  for (int r = 0; r < members; ++r) {
    replies[r].reserve(asked[r].size() * static_cast<std::size_t>(columns_));
    for (const vertex_t v : asked[r]) {
      const auto row = rows_.row(partition_.local_index[v]);
      replies[r].insert(replies[r].end(), row.begin(), row.end());
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
