#include "bulkgnn/comm/self_communicator.hpp"

#include <algorithm>
#include <optional>

namespace bulkgnn::comm {
namespace {

// Requests that finished when they started.
class finished final : public request::pending {
 public:
  bool test() override { return true; }
  void wait() override {}
};

std::optional<std::vector<std::byte>> take(self_communicator::mailbox& box, int tag) {
  const std::lock_guard lock(box.mutex);
  auto found = box.messages.find(tag);
  if (found == box.messages.end() || found->second.empty()) return std::nullopt;
  auto message = std::move(found->second.front());
  found->second.pop_front();
  return message;
}

void copy_message(const std::vector<std::byte>& message, std::span<std::byte> values, int tag) {
  if (message.size() != values.size())
    throw error(
        fmt::format("self_communicator::receive: the message with tag {} has {} bytes for {} here",
                    tag, message.size(), values.size()));
  std::copy(message.begin(), message.end(), values.begin());
}

// A receive posted before its send: it completes once the send arrives.
class posted_receive final : public request::pending {
 public:
  posted_receive(std::shared_ptr<self_communicator::mailbox> box, std::span<std::byte> values,
                 int tag)
      : box_(std::move(box)), values_(values), tag_(tag) {}
  bool test() override {
    const auto message = take(*box_, tag_);
    if (message) copy_message(*message, values_, tag_);
    return message.has_value();
  }
  void wait() override {
    if (!test())
      throw error(fmt::format(
          "self_communicator::irecv: no message with tag {} was sent; waiting would never end",
          tag_));
  }

 private:
  std::shared_ptr<self_communicator::mailbox> box_;
  std::span<std::byte> values_;
  int tag_;
};

}  // namespace

self_communicator::self_communicator(std::string stage, traffic_log& log)
    : communicator(0, 1, std::move(stage), log) {}

std::unique_ptr<communicator> self_communicator::split(int, int, const std::string& stage) const {
  return std::make_unique<self_communicator>(stage, log());
}

std::unique_ptr<communicator> self_communicator::duplicate(const std::string& stage,
                                                           traffic_log& log) const {
  return std::make_unique<self_communicator>(stage, log);
}

void self_communicator::exchange_v(std::span<const std::byte> send, std::span<const std::int64_t>,
                                   std::span<std::byte> receive, std::span<const std::int64_t>,
                                   std::size_t) {
  std::copy(send.begin(), send.end(), receive.begin());
}

void self_communicator::gather_v(std::span<const std::byte> mine, std::span<std::byte> all,
                                 std::span<const std::int64_t>, std::size_t) {
  std::copy(mine.begin(), mine.end(), all.begin());
}

void self_communicator::reduce_in_place(std::span<std::byte>, datatype, reduce_op) {}

std::unique_ptr<request::pending> self_communicator::start_reduce_in_place(std::span<std::byte>,
                                                                           datatype, reduce_op) {
  return std::make_unique<finished>();
}

void self_communicator::reduce_scatter_blocks(std::span<const std::byte> send,
                                              std::span<std::byte> receive, datatype, reduce_op) {
  std::copy(send.begin(), send.end(), receive.begin());
}

void self_communicator::reduce_scatter_sized_blocks(std::span<const std::byte> send,
                                                    std::span<std::byte> receive,
                                                    std::span<const std::int64_t>, datatype,
                                                    reduce_op) {
  std::copy(send.begin(), send.end(), receive.begin());
}

void self_communicator::broadcast_bytes(std::span<std::byte>, int, std::size_t) {}

void self_communicator::send_bytes(std::span<const std::byte> values, int, int tag, std::size_t) {
  const std::lock_guard lock(mailbox_->mutex);
  mailbox_->messages[tag].emplace_back(values.begin(), values.end());
}

void self_communicator::receive_bytes(std::span<std::byte> values, int, int tag, std::size_t) {
  copy_message(receive_any_length(0, tag), values, tag);
}

std::vector<std::byte> self_communicator::receive_any_length(int, int tag) {
  auto message = take(*mailbox_, tag);
  if (!message)
    throw error(fmt::format(
        "self_communicator::receive: no message with tag {} was sent; waiting would never end",
        tag));
  return std::move(*message);
}

std::unique_ptr<request::pending> self_communicator::start_send(std::span<const std::byte> values,
                                                                int destination, int tag,
                                                                std::size_t unit) {
  send_bytes(values, destination, tag, unit);
  return std::make_unique<finished>();
}

std::unique_ptr<request::pending> self_communicator::start_receive(std::span<std::byte> values, int,
                                                                   int tag, std::size_t) {
  return std::make_unique<posted_receive>(mailbox_, values, tag);
}

void self_communicator::wait_for_every_rank() {}

}  // namespace bulkgnn::comm
