#include "bulkgnn/distributed/partitioned_features.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <algorithm>
#include <numeric>

namespace bulkgnn::distributed {

namespace {

// Where fetch_placed's staging buffer holds each requested row: the owners'
// replies in owner order, then the cached rows.
struct staging_plan {
  std::vector<std::vector<vertex_t>> requests;  // by owner: the rows not cached
  std::vector<vertex_t> cache_slots;            // the cached rows' slots, in request order
  std::vector<vertex_t> position;               // request i's row in the staging buffer
  std::int64_t uncached = 0;
};

// slot[i] is request i's cache slot, or -1 when its owner sends it.
staging_plan plan_staging(std::span<const vertex_t> vertices, std::span<const std::int32_t> slot,
                          std::span<const std::int32_t> owner, int members) {
  std::vector<std::int64_t> next(static_cast<std::size_t>(members) + 1, 0);
  const auto source = [&](std::size_t i) { return slot[i] < 0 ? owner[vertices[i]] : members; };
  for (std::size_t i = 0; i < vertices.size(); ++i) ++next[source(i)];
  std::exclusive_scan(next.begin(), next.end(), next.begin(), std::int64_t{0});
  staging_plan plan;
  plan.uncached = next[members];
  plan.requests.resize(static_cast<std::size_t>(members));
  plan.position.resize(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const int from = source(i);
    plan.position[i] = static_cast<vertex_t>(next[from]++);
    if (from < members)
      plan.requests[from].push_back(vertices[i]);
    else
      plan.cache_slots.push_back(slot[i]);
  }
  return plan;
}

}  // namespace

struct partitioned_features::placed_rows {
  executor exec;
  const loader::row_normalizer* normalizer = nullptr;
  std::unique_ptr<comm::device_communicator> wire;
  buffer<float> part;   // this rank's rows, normalised, in local_index order
  buffer<float> cache;  // cached_rows_, normalised, by slot
};

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
  if (placed_)
    placed_->cache = placed_copy(
        {static_cast<std::int64_t>(chosen.size()), columns_, std::span<const float>(cached_rows_)},
        chosen);
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

void partitioned_features::check_request(std::span<const vertex_t> vertices,
                                         dense_view<float> out) const {
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(vertices.size()) && out.cols == columns_,
                  "features: fetching {} rows into a {}x{} buffer", vertices.size(), out.rows,
                  out.cols);
  for (const vertex_t v : vertices)
    BULKGNN_EXPECTS(v >= 0 && v < partition_.num_vertices(), "features: vertex {} out of range", v);
}

std::int32_t partitioned_features::count_request(vertex_t v) {
  const auto at = static_cast<std::size_t>(v);
  const bool remote = partition_.owner[at] != group_->rank();
  if (counting_ && remote && !access_counts_.empty()) ++access_counts_[at];
  const std::int32_t slot = cache_slot_.empty() ? -1 : cache_slot_[at];
  if (!counting_) return slot;
  if (slot < 0) {
    ++(remote ? counts_.misses : counts_.local);
  } else {
    ++counts_.hits;
    counts_.bytes_saved += 4 + 4 * columns_;
  }
  return slot;
}

void partitioned_features::fetch(std::span<const vertex_t> vertices, dense_view<float> out) {
  check_request(vertices, out);
  // Rows not cached go to their owners; the rest are copied here.
  std::vector<vertex_t> uncached;
  std::vector<std::size_t> uncached_at;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const std::int32_t slot = count_request(vertices[i]);
    if (slot < 0) {
      uncached.push_back(vertices[i]);
      uncached_at.push_back(i);
      continue;
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

partitioned_features::~partitioned_features() = default;

bool partitioned_features::place_on_device(const executor& exec,
                                           const loader::row_normalizer* normalizer) {
  if (exec.device() == nullptr || !comm::nccl_compiled()) return false;
  place_rows(exec, normalizer,
             [&](comm::communicator& group) { return comm::make_nccl_communicator(group, exec); });
  return true;
}

void partitioned_features::place_rows(const executor& exec,
                                      const loader::row_normalizer* normalizer,
                                      const wire_maker& make_wire) {
  auto placed = std::make_unique<placed_rows>();
  placed->exec = exec;
  placed->normalizer = normalizer;
  placed->wire = make_wire(*group_);
  placed_ = std::move(placed);
  const int mine = group_->rank();
  std::vector<vertex_t> vertex_of_row(static_cast<std::size_t>(rows_.rows));
  for (std::size_t v = 0; v < partition_.owner.size(); ++v)
    if (partition_.owner[v] == mine)
      vertex_of_row[static_cast<std::size_t>(partition_.local_index[v])] = static_cast<vertex_t>(v);
  placed_->part = placed_copy(rows_, vertex_of_row);
  std::vector<vertex_t> cached(static_cast<std::size_t>(counts_.cached_rows));
  for (std::size_t v = 0; v < cache_slot_.size(); ++v)
    if (cache_slot_[v] >= 0)
      cached[static_cast<std::size_t>(cache_slot_[v])] = static_cast<vertex_t>(v);
  placed_->cache = placed_copy(
      {static_cast<std::int64_t>(cached.size()), columns_, std::span<const float>(cached_rows_)},
      cached);
}

memory_resource* partitioned_features::placed_memory() const {
  return placed_ ? &placed_->exec.memory() : nullptr;
}

buffer<float> partitioned_features::placed_copy(dense_view<const float> rows,
                                                std::span<const vertex_t> vertices) const {
  memory_resource& target = placed_->exec.memory();
  if (placed_->normalizer == nullptr) return copy_to(rows.data, target);
  std::vector<float> normalized(rows.data.begin(), rows.data.end());
  placed_->normalizer->apply(vertices, {rows.rows, rows.cols, std::span<float>(normalized)});
  return copy_to(std::span<const float>(normalized), target);
}

void partitioned_features::fetch_placed(std::span<const vertex_t> vertices, dense_view<float> out) {
  BULKGNN_EXPECTS(placed_ != nullptr, "features: fetch_placed before place_on_device");
  check_request(vertices, out);
  const int members = group_->size();
  std::vector<std::int32_t> slot(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) slot[i] = count_request(vertices[i]);
  const auto plan = plan_staging(vertices, slot, partition_.owner, members);
  const auto asked = group_->all_to_all(plan.requests);
  std::vector<vertex_t> served;
  std::vector<std::int64_t> send_counts(members);
  std::vector<std::int64_t> receive_counts(members);
  for (int r = 0; r < members; ++r) {
    for (const vertex_t v : asked[r]) served.push_back(partition_.local_index[v]);
    send_counts[r] = static_cast<std::int64_t>(asked[r].size()) * columns_;
    receive_counts[r] = static_cast<std::int64_t>(plan.requests[r].size()) * columns_;
  }

  const executor& exec = placed_->exec;
  memory_resource& memory = exec.memory();
  const auto space = memory.space();
  const auto on_device = [&](const std::vector<vertex_t>& ids) {
    return copy_to(std::span<const vertex_t>(ids), memory);
  };
  const auto rows_of = [&](buffer<float>& values, std::int64_t first, std::int64_t count) {
    return dense_view<float>{count, columns_,
                             std::span<float>(values.data() + first * columns_,
                                              static_cast<std::size_t>(count * columns_)),
                             space};
  };
  const dense_view<const float> part{rows_.rows, columns_, std::span<const float>(placed_->part),
                                     space};
  buffer<float> send(served.size() * static_cast<std::size_t>(columns_), memory);
  kernels::gather_dense_rows(exec, part, on_device(served),
                             rows_of(send, 0, static_cast<std::int64_t>(served.size())));
  buffer<float> staging(vertices.size() * static_cast<std::size_t>(columns_), memory);
  placed_->wire->all_to_all(std::span<const float>(send), send_counts,
                            rows_of(staging, 0, plan.uncached).data, receive_counts);
  if (!plan.cache_slots.empty()) {
    const dense_view<const float> cache{counts_.cached_rows, columns_,
                                        std::span<const float>(placed_->cache), space};
    kernels::gather_dense_rows(
        exec, cache, on_device(plan.cache_slots),
        rows_of(staging, plan.uncached, static_cast<std::int64_t>(plan.cache_slots.size())));
  }
  kernels::gather_dense_rows(exec,
                             {static_cast<std::int64_t>(vertices.size()), columns_,
                              std::span<const float>(staging), space},
                             on_device(plan.position), out);
  // The minibatch goes to a model on another stream: complete it here.
  exec.synchronize();
}

}  // namespace bulkgnn::distributed
