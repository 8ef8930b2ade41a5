#include "bulkgnn/comm/communicator.hpp"

#include <utility>

namespace bulkgnn::comm {

traffic_bytes all_to_all_bytes(const all_to_all_shape& shape) {
  const auto& [send, send_counts, receive, receive_counts, rank, ranks, element_bytes] = shape;
  BULKGNN_EXPECTS(static_cast<int>(send_counts.size()) == ranks &&
                      static_cast<int>(receive_counts.size()) == ranks,
                  "comm::all_to_all: {} send_counts and {} receive_counts for {} ranks",
                  send_counts.size(), receive_counts.size(), ranks);
  std::int64_t to_send = 0, to_receive = 0;
  traffic_bytes bytes;
  const auto element = static_cast<std::int64_t>(element_bytes);
  for (int r = 0; r < ranks; ++r) {
    BULKGNN_EXPECTS(send_counts[r] >= 0 && receive_counts[r] >= 0,
                    "comm::all_to_all: negative count for rank {}", r);
    to_send += send_counts[r];
    to_receive += receive_counts[r];
    if (r == rank) continue;
    bytes.sent += send_counts[r] * element;
    bytes.received += receive_counts[r] * element;
  }
  BULKGNN_EXPECTS(to_send == static_cast<std::int64_t>(send) &&
                      to_receive == static_cast<std::int64_t>(receive),
                  "comm::all_to_all: send_counts sum to {} for {} elements to send, "
                  "receive_counts to {} for room for {}",
                  to_send, send, to_receive, receive);
  return bytes;
}

request::request(std::unique_ptr<pending> started, std::function<void()> on_completion)
    : pending_(std::move(started)), on_completion_(std::move(on_completion)) {}

request& request::operator=(request&& other) {
  if (this != &other) {
    wait();
    pending_ = std::move(other.pending_);
    on_completion_ = std::move(other.on_completion_);
  }
  return *this;
}

request::~request() { wait(); }

void request::wait() {
  if (!pending_) return;
  pending_->wait();
  complete();
}

bool request::test() {
  if (!pending_) return true;
  if (!pending_->test()) return false;
  complete();
  return true;
}

void request::complete() {
  pending_.reset();
  if (on_completion_) std::exchange(on_completion_, {})();
}

communicator::communicator(int rank, int size, std::string stage, traffic_log& log)
    : rank_(rank), size_(size), stage_(std::move(stage)), log_(&log) {}

void communicator::barrier() {
  const stopwatch watch;
  wait_for_every_rank();
  count(0, 0, watch.seconds());
}

std::int64_t communicator::ring_bytes(std::int64_t bytes) const {
  return size_ > 1 ? 2 * (size_ - 1) * bytes / size_ : 0;
}

void communicator::count_broadcast(std::int64_t bytes, int root, double seconds) {
  const int last_in_chain = (root + size_ - 1) % size_;
  count(size_ > 1 && rank_ != last_in_chain ? bytes : 0, rank_ != root ? bytes : 0, seconds);
}

void communicator::require_rank(int r, const char* function, const char* argument) const {
  BULKGNN_EXPECTS(r >= 0 && r < size_, "comm::{}: {} {} is not a rank of {}", function, argument, r,
                  size_);
}

void communicator::count(std::int64_t sent, std::int64_t received, double seconds) {
  log_->add(stage_, traffic{sent, received, 1, seconds});
}

}  // namespace bulkgnn::comm
