#pragma once

#include "bulkgnn/comm/communicator.hpp"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bulkgnn::comm {

// One rank and no MPI: every collective is a local copy, and a message sent
// to itself waits in a mailbox until received. Single-process runs and unit
// tests use it; traffic is counted by the same rules (no bytes, since there
// are no other ranks).
class self_communicator final : public communicator {
 public:
  self_communicator(std::string stage, traffic_log& log);

  [[nodiscard]] std::unique_ptr<communicator> split(int colour, int key,
                                                    const std::string& stage) const override;
  [[nodiscard]] std::unique_ptr<communicator> duplicate(const std::string& stage,
                                                        traffic_log& log) const override;

  // Messages sent to this rank and not yet received, by tag.
  struct mailbox {
    std::mutex mutex;
    std::map<int, std::deque<std::vector<std::byte>>> messages;
  };

 protected:
  void exchange_v(std::span<const std::byte> send, std::span<const std::int64_t> send_counts,
                  std::span<std::byte> receive, std::span<const std::int64_t> receive_counts,
                  std::size_t unit) override;
  void gather_v(std::span<const std::byte> mine, std::span<std::byte> all,
                std::span<const std::int64_t> counts, std::size_t unit) override;
  void reduce_in_place(std::span<std::byte> values, datatype type, reduce_op op) override;
  [[nodiscard]] std::unique_ptr<request::pending> start_reduce_in_place(std::span<std::byte> values,
                                                                        datatype type,
                                                                        reduce_op op) override;
  void reduce_scatter_blocks(std::span<const std::byte> send, std::span<std::byte> receive,
                             datatype type, reduce_op op) override;
  void reduce_scatter_sized_blocks(std::span<const std::byte> send, std::span<std::byte> receive,
                                   std::span<const std::int64_t> counts, datatype type,
                                   reduce_op op) override;
  void broadcast_bytes(std::span<std::byte> values, int root, std::size_t unit) override;
  void send_bytes(std::span<const std::byte> values, int destination, int tag,
                  std::size_t unit) override;
  void receive_bytes(std::span<std::byte> values, int source, int tag, std::size_t unit) override;
  [[nodiscard]] std::vector<std::byte> receive_any_length(int source, int tag) override;
  [[nodiscard]] std::unique_ptr<request::pending> start_send(std::span<const std::byte> values,
                                                             int destination, int tag,
                                                             std::size_t unit) override;
  [[nodiscard]] std::unique_ptr<request::pending> start_receive(std::span<std::byte> values,
                                                                int source, int tag,
                                                                std::size_t unit) override;
  void wait_for_every_rank() override;

 private:
  std::shared_ptr<mailbox> mailbox_ = std::make_shared<mailbox>();
};

}  // namespace bulkgnn::comm
