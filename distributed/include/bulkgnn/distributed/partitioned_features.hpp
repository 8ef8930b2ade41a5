#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/loader/loader.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bulkgnn::distributed {

// Which remote rows the hot-vertex cache of partitioned_features keeps.
enum class cache_choice {
  by_degree,             // the remote vertices of largest in-degree, chosen once
  by_access,             // the most fetched remote rows of the first epoch, kept after
  by_access_each_epoch,  // re-chosen after every epoch from that epoch's fetches
};
[[nodiscard]] cache_choice parse_cache_choice(const std::string& name);
[[nodiscard]] std::string cache_choice_name(cache_choice choice);

struct feature_cache_options {
  std::int64_t bytes = 0;  // room for rows (4·f bytes each); 0: no cache
  cache_choice choice = cache_choice::by_degree;
};

// What the cache did since the last take_cache_counts(), on this rank.
struct feature_cache_counts {
  std::int64_t local = 0;        // requested rows this rank owns
  std::int64_t hits = 0;         // remote rows served from the cache
  std::int64_t misses = 0;       // remote rows fetched from their owner
  std::int64_t bytes_saved = 0;  // what the hits would have moved: 4 (id) + 4·f (row) each
  std::int64_t cached_rows = 0;  // rows in the cache now
};

// Node features partitioned by vertex owner and replicated c times: the P
// ranks form c groups of P/c, and member q of every group keeps the rows of
// part q. A minibatch's input features are fetched inside the rank's own
// group with one all-to-all each way: vertex ids (4 bytes each) to their
// owners, rows (4·f bytes each) back. More replication means smaller groups,
// so fewer rows come from other ranks and more memory is used.
//
// A hot-vertex cache keeps copies of the remote rows fetched most often (by
// in-degree, or by counted fetches), as many as feature_cache_options.bytes
// holds; a cached row never crosses the network again. Rows are the owner's
// bytes either way, so the cache changes traffic, never results.
class partitioned_features final : public loader::feature_fetcher {
 public:
  // `features` is read only for this rank's rows. The partition must have
  // P/c parts.
  // `graph` (whole) gives the in-degrees that cache_choice::by_degree ranks
  // by; filling that cache is collective.
  partitioned_features(const comm::communicator& features_comm, dense_view<const float> features,
                       const vertex_partition& partition, int replication,
                       const feature_cache_options& cache = {}, csr_view graph = {});
  // From this rank's rows alone (its part of a partitioned dataset, in
  // local_index order), read in place; `in_degrees` is called once, only for
  // a cache by degree.
  partitioned_features(const comm::communicator& features_comm, dense_view<const float> mine,
                       const vertex_partition& partition, int replication,
                       const feature_cache_options& cache,
                       const std::function<std::vector<std::int64_t>()>& in_degrees);

  ~partitioned_features() override;
  partitioned_features(const partitioned_features&) = delete;
  partitioned_features& operator=(const partitioned_features&) = delete;

  [[nodiscard]] std::int64_t columns() const override { return columns_; }
  void fetch(std::span<const vertex_t> vertices, dense_view<float> out) override;
  void count_fetches(bool on) override { counting_ = on; }
  [[nodiscard]] std::int64_t local_rows() const;

  // Rows GPU to GPU: this rank's part and the cache are copied (normalised)
  // into the memory of `exec`'s GPU; a fetch_placed() sends the ids to their
  // owners over the group's communicator as fetch() does, each owner gathers
  // the asked rows on its GPU, and one all_to_all over NCCL moves them into
  // the requester's GPU memory, where a last gather puts them (and the rows
  // of the cache) in request order. Same rows, same cache counts, same
  // traffic as fetch() but the 4-byte row count of each part.
  bool place_on_device(const executor& exec, const loader::row_normalizer* normalizer) override;
  // place_on_device() over the wire `make_wire` builds from the feature
  // group's communicator (collective): NCCL's there; make_host_communicator
  // runs the same steps in host memory with a host `exec` (the CPU oracle).
  using wire_maker =
      std::function<std::unique_ptr<comm::device_communicator>(comm::communicator& group)>;
  void place_rows(const executor& exec, const loader::row_normalizer* normalizer,
                  const wire_maker& make_wire);
  [[nodiscard]] memory_resource* placed_memory() const override;
  void fetch_placed(std::span<const vertex_t> vertices, dense_view<float> out) override;

  // Call on every rank when an epoch's fetches are done (collective): a
  // cache chosen by access is filled after the first epoch, and refilled
  // after each one with cache_choice::by_access_each_epoch.
  void end_epoch();
  [[nodiscard]] feature_cache_counts take_cache_counts();
  [[nodiscard]] std::int64_t cache_capacity_rows() const { return cache_capacity_; }

 private:
  // The cache's room and, for a choice by degree, its rows (collective).
  void start_cache(const feature_cache_options& cache,
                   const std::function<std::vector<std::int64_t>()>& in_degrees);
  // Every requested row from its owner, none from the cache (collective).
  void fetch_from_owners(std::span<const vertex_t> vertices, dense_view<float> out);
  // Throws unless `out` fits the request and every vertex exists.
  void check_request(std::span<const vertex_t> vertices, dense_view<float> out) const;
  // v's cache slot, or -1 (fetch it from its owner); counts the request.
  std::int32_t count_request(vertex_t v);
  // `rows` (of `vertices`, one each) normalised as placed, in placed memory.
  [[nodiscard]] buffer<float> placed_copy(dense_view<const float> rows,
                                          std::span<const vertex_t> vertices) const;
  // Replaces the cache by the rows of `chosen` (collective).
  void fill_cache(std::vector<vertex_t> chosen);
  // Up to the capacity's remote vertices of largest score, ties by id.
  [[nodiscard]] std::vector<vertex_t> hottest_remote(std::span<const std::int64_t> score) const;

  std::unique_ptr<comm::communicator> group_;
  const vertex_partition& partition_;
  std::int64_t columns_;
  std::vector<float> copied_rows_;  // empty when the rows are read in place
  dense_view<const float> rows_;    // this rank's part, in local_index order

  cache_choice choice_;
  std::int64_t cache_capacity_ = 0;  // rows
  std::int64_t epochs_ended_ = 0;
  std::vector<std::int32_t> cache_slot_;  // by vertex: its row in cached_rows_, or -1
  std::vector<float> cached_rows_;
  std::vector<std::int64_t> access_counts_;  // by vertex, remote fetches this epoch (by access)
  feature_cache_counts counts_;
  bool counting_ = true;

  struct placed_rows;
  std::unique_ptr<placed_rows> placed_;  // set by place_rows
};

}  // namespace bulkgnn::distributed
