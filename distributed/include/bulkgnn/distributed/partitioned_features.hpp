#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/loader/loader.hpp"

#include <cstdint>
#include <vector>

namespace bulkgnn::distributed {

// Node features partitioned by vertex owner and replicated c times: the P
// ranks form c groups of P/c, and member q of every group keeps the rows of
// part q. A minibatch's input features are fetched inside the rank's own
// group with one all-to-all each way: vertex ids (4 bytes each) to their
// owners, rows (4·f bytes each) back. More replication means smaller groups,
// so fewer rows come from other ranks and more memory is used.
class partitioned_features final : public loader::feature_fetcher {
 public:
  // `features` is read only for this rank's rows. The partition must have
  // P/c parts.
  partitioned_features(const comm::communicator& features_comm, dense_view<const float> features,
                       const vertex_partition& partition, int replication);

  [[nodiscard]] std::int64_t columns() const override { return columns_; }
  void fetch(std::span<const vertex_t> vertices, dense_view<float> out) override;
  [[nodiscard]] std::int64_t local_rows() const;

 private:
  std::unique_ptr<comm::communicator> group_;
  const vertex_partition& partition_;
  std::int64_t columns_;
  std::vector<float> rows_;  // this rank's part, in local_index order
};

}  // namespace bulkgnn::distributed
