#pragma once

#include "bulkgnn/comm/codec.hpp"
#include "bulkgnn/comm/datatype.hpp"
#include "bulkgnn/comm/traffic.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory_space.hpp"
#include "bulkgnn/core/timer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace bulkgnn::comm {

// A communication that was started and has maybe not finished. Its buffers
// must stay alive and untouched until wait() returns or test() returns true;
// destroying an unfinished request waits for it. Its traffic is counted on
// completion, so the communicator that started it must outlive it.
class request {
 public:
  // What a backend keeps for one started operation.
  class pending {
   public:
    virtual ~pending() = default;
    [[nodiscard]] virtual bool test() = 0;
    virtual void wait() = 0;
  };

  request() = default;  // already complete
  request(std::unique_ptr<pending> started, std::function<void()> on_completion);
  request(request&& other) noexcept = default;
  request& operator=(request&& other);
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  ~request();

  void wait();
  // True (and complete) if the operation has finished; never blocks.
  [[nodiscard]] bool test();
  [[nodiscard]] bool done() const { return pending_ == nullptr; }

 private:
  void complete();

  std::unique_ptr<pending> pending_;
  std::function<void()> on_completion_;
};

// The ranks of one communication context, as seen by one of them, counting
// the traffic of every call under its stage name ("sampling", "features",
// "gradients", ...) in a traffic_log. Collective calls must be made by every
// rank in the same order; contexts that run concurrently (pipeline stages on
// their own threads) each use their own communicator.
//
// The typed calls below take spans of trivially copyable elements and reduce
// to a small byte-level core that a backend implements (mpi_communicator,
// self_communicator; NCCL later). A plain span is host memory. The calls
// that will carry device data (all_reduce, broadcast, send, receive) also
// take a dense_view, which says where its elements live: reachable() checks
// that space against the backend's reaches() and names the call and the
// space if the backend cannot touch it (MPI and one rank reach
// host-accessible memory; an NCCL backend will reach device memory). Codecs
// run on the host, so a device backend encodes after a copy or not at all.
//
// Traffic rules (per rank, P ranks, N the bytes of the buffer named; all
// counted once per call, bytes a rank keeps for itself not at all):
//  - all_to_all of parts: Σ over other ranks d of 4 (the part's element count,
//    an int) + the part's bytes (encoded), each way.
//  - all_to_all with counts given: Σ over other ranks of the bytes to/from them.
//  - all_reduce: 2(P-1)·N/P each way, rounded down (ring: reduce-scatter, then
//    all-gather).
//  - reduce_scatter: (P-1)·B each way, B the bytes of one rank's block (the
//    ring's first half).
//  - reduce_scatter with counts given: the bytes of every block but this
//    rank's, each way (the ring's first half; (P-1)·B for equal blocks).
//  - all_gather: the other ranks' contributions each way, (P-1)·N for a fixed
//    size; all_gather_v first gathers the sizes (8 bytes each, its own call).
//  - all_gather_v with counts given: (P-1)·(this rank's bytes) sent, the
//    other ranks' bytes received.
//  - broadcast: every rank but the root receives N; a pipelined chain root,
//    root+1, ... (mod P) forwards it, so every rank but the chain's last sends
//    N; with a codec N is the encoded bytes plus an 8-byte length sent before.
//  - send/receive: the message's bytes (encoded), to or from another rank.
//  - barrier: no bytes.
//  Non-blocking calls count as their blocking twin, when they complete.
// An all_to_all with counts given, as one rank makes it: `send` elements in
// parts of send_counts, room for `receive` in parts of receive_counts.
struct all_to_all_shape {
  std::size_t send = 0;
  std::span<const std::int64_t> send_counts;
  std::size_t receive = 0;
  std::span<const std::int64_t> receive_counts;
  int rank = 0;
  int ranks = 1;
  std::size_t element_bytes = 1;
};
struct traffic_bytes {
  std::int64_t sent = 0;
  std::int64_t received = 0;
};
// Its traffic by the rule above (the bytes to and from other ranks), once the
// counts are checked to split both buffers over the ranks: option_error
// naming comm::all_to_all otherwise. Every backend's all_to_all counts by it.
[[nodiscard]] traffic_bytes all_to_all_bytes(const all_to_all_shape& shape);

class communicator {
 public:
  virtual ~communicator() = default;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] const std::string& stage() const { return stage_; }
  [[nodiscard]] traffic_log& log() const { return *log_; }
  // Whether this backend's calls can read and write memory in `space`.
  [[nodiscard]] virtual bool reaches(memory_space space) const { return host_accessible(space); }

  // The ranks with the same colour, ordered by key, as a new communicator
  // counted under `stage` in this one's log (collective).
  [[nodiscard]] virtual std::unique_ptr<communicator> split(int colour, int key,
                                                            const std::string& stage) const = 0;
  // The same ranks as a separate context counted under `stage` in `log`
  // (collective).
  [[nodiscard]] virtual std::unique_ptr<communicator> duplicate(const std::string& stage,
                                                                traffic_log& log) const = 0;

  // send[d] goes to rank d; returns what each rank sent here, by source.
  template <class T>
  [[nodiscard]] std::vector<std::vector<T>> all_to_all(const std::vector<std::vector<T>>& send,
                                                       const codec& wire = identity());
  // send holds the parts for ranks 0..P-1 back to back (send_counts
  // elements each); receive gets the parts from each rank back to back,
  // receive_counts elements each (which the caller must know).
  template <class T>
  void all_to_all(std::span<const T> send, std::span<const std::int64_t> send_counts,
                  std::span<T> receive, std::span<const std::int64_t> receive_counts);

  // Element-wise op over every rank's `values`, in place on every rank.
  template <class T>
  void all_reduce(std::span<T> values, reduce_op op = reduce_op::sum);
  template <class T>
  requires is_reducible_v<T>
  [[nodiscard]] T all_reduce(T value, reduce_op op);
  template <class T>
  [[nodiscard]] request all_reduce_async(std::span<T> values, reduce_op op = reduce_op::sum);
  template <class T>
  void all_reduce(dense_view<T> values, reduce_op op = reduce_op::sum) {
    all_reduce(reachable(values, "all_reduce"), op);
  }
  template <class T>
  [[nodiscard]] request all_reduce_async(dense_view<T> values, reduce_op op = reduce_op::sum) {
    return all_reduce_async(reachable(values, "all_reduce_async"), op);
  }

  // Block r (receive.size() elements) of the element-wise op over every
  // rank's `send` (P blocks), into `receive` on rank r.
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> receive, reduce_op op = reduce_op::sum);
  // The same with blocks of any size: block r has counts[r] elements
  // (receive.size() == counts[rank()], send.size() == their sum).
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> receive,
                      std::span<const std::int64_t> counts, reduce_op op = reduce_op::sum);

  // Every rank's `value`, by rank.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather(T value);
  // Every rank's `values` (the same count on every rank), in rank order.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather(std::span<const T> values);
  // Every rank's `values` (any count), concatenated in rank order.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather_v(std::span<const T> values,
                                            const codec& wire = identity());
  // Every rank's `mine` into `all`, in rank order, when every rank knows
  // every count (counts[r] elements from rank r; no sizes exchanged).
  template <class T>
  void all_gather_v(std::span<const T> mine, std::span<T> all,
                    std::span<const std::int64_t> counts);

  // The root's `values` into every rank's `values` (the same count on each).
  template <class T>
  void broadcast(std::span<T> values, int root, const codec& wire = identity());
  template <class T>
  void broadcast(dense_view<T> values, int root, const codec& wire = identity()) {
    broadcast(reachable(values, "broadcast"), root, wire);
  }

  // Point to point: `receive` must have the size of what was sent.
  template <class T>
  void send(std::span<const T> values, int destination, int tag, const codec& wire = identity());
  template <class T>
  void receive(std::span<T> values, int source, int tag, const codec& wire = identity());
  template <class T>
  void send(dense_view<const T> values, int destination, int tag, const codec& wire = identity()) {
    send(std::span<const T>(reachable(values, "send")), destination, tag, wire);
  }
  template <class T>
  void receive(dense_view<T> values, int source, int tag, const codec& wire = identity()) {
    receive(reachable(values, "receive"), source, tag, wire);
  }
  template <class T>
  [[nodiscard]] request isend(std::span<const T> values, int destination, int tag);
  template <class T>
  [[nodiscard]] request irecv(std::span<T> values, int source, int tag);

  void barrier();

 protected:
  communicator(int rank, int size, std::string stage, traffic_log& log);

  // The byte-level core. Counts are in elements of `unit` bytes (the typed
  // element's size, so that counts fit the backend's integers); buffers are
  // the ranks' parts back to back; arguments are valid (checked above).
  virtual void exchange_v(std::span<const std::byte> send,
                          std::span<const std::int64_t> send_counts, std::span<std::byte> receive,
                          std::span<const std::int64_t> receive_counts, std::size_t unit) = 0;
  virtual void gather_v(std::span<const std::byte> mine, std::span<std::byte> all,
                        std::span<const std::int64_t> counts, std::size_t unit) = 0;
  virtual void reduce_in_place(std::span<std::byte> values, datatype type, reduce_op op) = 0;
  [[nodiscard]] virtual std::unique_ptr<request::pending> start_reduce_in_place(
      std::span<std::byte> values, datatype type, reduce_op op) = 0;
  virtual void reduce_scatter_blocks(std::span<const std::byte> send, std::span<std::byte> receive,
                                     datatype type, reduce_op op) = 0;
  // Counts in elements of `type`, one per rank.
  virtual void reduce_scatter_sized_blocks(std::span<const std::byte> send,
                                           std::span<std::byte> receive,
                                           std::span<const std::int64_t> counts, datatype type,
                                           reduce_op op) = 0;
  virtual void broadcast_bytes(std::span<std::byte> values, int root, std::size_t unit) = 0;
  virtual void send_bytes(std::span<const std::byte> values, int destination, int tag,
                          std::size_t unit) = 0;
  virtual void receive_bytes(std::span<std::byte> values, int source, int tag,
                             std::size_t unit) = 0;
  // A message of a length the receiver does not know (an encoded one).
  [[nodiscard]] virtual std::vector<std::byte> receive_any_length(int source, int tag) = 0;
  [[nodiscard]] virtual std::unique_ptr<request::pending> start_send(
      std::span<const std::byte> values, int destination, int tag, std::size_t unit) = 0;
  [[nodiscard]] virtual std::unique_ptr<request::pending> start_receive(std::span<std::byte> values,
                                                                        int source, int tag,
                                                                        std::size_t unit) = 0;
  virtual void wait_for_every_rank() = 0;

 private:
  template <class T>
  std::span<T> reachable(dense_view<T> values, const char* function) const {
    BULKGNN_EXPECTS(reaches(values.space),
                    "comm::{}: the buffer is in {} memory, which this communicator (stage '{}') "
                    "cannot reach",
                    function, memory_space_name(values.space), stage_);
    return values.data;
  }
  template <class T>
  static std::span<const std::byte> bytes_of(std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>, "communicators move trivially copyable types");
    return std::as_bytes(values);
  }
  template <class T>
  static std::span<std::byte> writable_bytes_of(std::span<T> values) {
    static_assert(std::is_trivially_copyable_v<T>, "communicators move trivially copyable types");
    return std::as_writable_bytes(values);
  }
  template <class T>
  static std::vector<T> decoded(const codec& wire, std::span<const std::byte> encoded,
                                const char* function);
  template <class T>
  std::vector<std::vector<T>> exchange_parts(const std::vector<std::vector<T>>& send);
  template <class T>
  void count_parts(const std::vector<std::vector<T>>& sent,
                   const std::vector<std::vector<T>>& received, double seconds);
  [[nodiscard]] std::int64_t ring_bytes(std::int64_t bytes) const;
  void count_broadcast(std::int64_t bytes, int root, double seconds);
  void require_rank(int r, const char* function, const char* argument) const;
  void count(std::int64_t sent, std::int64_t received, double seconds);

  int rank_ = 0;
  int size_ = 1;
  std::string stage_;
  traffic_log* log_;
};

template <class T>
std::vector<T> communicator::decoded(const codec& wire, std::span<const std::byte> encoded,
                                     const char* function) {
  const auto raw = wire.decode(encoded, element_info_of<T>());
  if (raw.size() % sizeof(T) != 0)
    throw error(fmt::format("comm::{}: the codec decoded {} bytes, not whole {}-byte elements",
                            function, raw.size(), sizeof(T)));
  std::vector<T> values(raw.size() / sizeof(T));
  if (!raw.empty()) std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

template <class T>
std::vector<std::vector<T>> communicator::exchange_parts(const std::vector<std::vector<T>>& send) {
  std::vector<std::int32_t> send_counts(size_), receive_counts(size_);
  for (int d = 0; d < size_; ++d) {
    BULKGNN_EXPECTS(send[d].size() <= std::numeric_limits<std::int32_t>::max(),
                    "comm::all_to_all: {} elements for rank {}; at most 2^31-1 per rank",
                    send[d].size(), d);
    send_counts[d] = static_cast<std::int32_t>(send[d].size());
  }
  const std::vector<std::int64_t> one_each(size_, 1);
  exchange_v(bytes_of(std::span<const std::int32_t>(send_counts)), one_each,
             writable_bytes_of(std::span<std::int32_t>(receive_counts)), one_each,
             sizeof(std::int32_t));
  std::vector<T> send_buffer;
  for (const auto& part : send) send_buffer.insert(send_buffer.end(), part.begin(), part.end());
  const std::vector<std::int64_t> send_sizes(send_counts.begin(), send_counts.end());
  const std::vector<std::int64_t> receive_sizes(receive_counts.begin(), receive_counts.end());
  std::int64_t total = 0;
  for (const auto c : receive_sizes) total += c;
  std::vector<T> receive_buffer(static_cast<std::size_t>(total));
  exchange_v(bytes_of(std::span<const T>(send_buffer)), send_sizes,
             writable_bytes_of(std::span<T>(receive_buffer)), receive_sizes, sizeof(T));
  std::vector<std::vector<T>> received(size_);
  auto next = receive_buffer.begin();
  for (int s = 0; s < size_; ++s) {
    received[s].assign(next, next + receive_sizes[s]);
    next += receive_sizes[s];
  }
  return received;
}

template <class T>
void communicator::count_parts(const std::vector<std::vector<T>>& sent,
                               const std::vector<std::vector<T>>& received, double seconds) {
  std::int64_t sent_bytes = 0, received_bytes = 0;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    sent_bytes += 4 + static_cast<std::int64_t>(sent[r].size() * sizeof(T));
    received_bytes += 4 + static_cast<std::int64_t>(received[r].size() * sizeof(T));
  }
  count(sent_bytes, received_bytes, seconds);
}

template <class T>
std::vector<std::vector<T>> communicator::all_to_all(const std::vector<std::vector<T>>& send,
                                                     const codec& wire) {
  BULKGNN_EXPECTS(static_cast<int>(send.size()) == size_,
                  "comm::all_to_all: send has {} parts for {} ranks", send.size(), size_);
  const stopwatch watch;
  if (wire.is_identity()) {
    auto received = exchange_parts(send);
    count_parts(send, received, watch.seconds());
    return received;
  }
  std::vector<std::vector<std::byte>> encoded(size_);
  for (int d = 0; d < size_; ++d)
    encoded[d] = wire.encode(bytes_of(std::span<const T>(send[d])), element_info_of<T>());
  const auto arrived = exchange_parts(encoded);
  std::vector<std::vector<T>> received(size_);
  for (int s = 0; s < size_; ++s) received[s] = decoded<T>(wire, arrived[s], "all_to_all");
  count_parts(encoded, arrived, watch.seconds());
  return received;
}

template <class T>
void communicator::all_to_all(std::span<const T> send, std::span<const std::int64_t> send_counts,
                              std::span<T> receive, std::span<const std::int64_t> receive_counts) {
  const auto bytes = all_to_all_bytes(
      {send.size(), send_counts, receive.size(), receive_counts, rank_, size_, sizeof(T)});
  const stopwatch watch;
  exchange_v(bytes_of(send), send_counts, writable_bytes_of(receive), receive_counts, sizeof(T));
  count(bytes.sent, bytes.received, watch.seconds());
}

template <class T>
void communicator::all_reduce(std::span<T> values, reduce_op op) {
  const stopwatch watch;
  reduce_in_place(writable_bytes_of(values), datatype_of<T>(), op);
  const auto ring = ring_bytes(static_cast<std::int64_t>(values.size_bytes()));
  count(ring, ring, watch.seconds());
}

template <class T>
requires is_reducible_v<T> T communicator::all_reduce(T value, reduce_op op) {
  all_reduce(std::span<T>(&value, 1), op);
  return value;
}

template <class T>
request communicator::all_reduce_async(std::span<T> values, reduce_op op) {
  const stopwatch watch;
  const auto ring = ring_bytes(static_cast<std::int64_t>(values.size_bytes()));
  return {start_reduce_in_place(writable_bytes_of(values), datatype_of<T>(), op),
          [this, ring, watch] { count(ring, ring, watch.seconds()); }};
}

template <class T>
void communicator::reduce_scatter(std::span<const T> send, std::span<T> receive, reduce_op op) {
  BULKGNN_EXPECTS(send.size() == receive.size() * static_cast<std::size_t>(size_),
                  "comm::reduce_scatter: send has {} elements, not {} ranks × {} of receive",
                  send.size(), size_, receive.size());
  const stopwatch watch;
  reduce_scatter_blocks(bytes_of(send), writable_bytes_of(receive), datatype_of<T>(), op);
  const auto others =
      static_cast<std::int64_t>(size_ - 1) * static_cast<std::int64_t>(receive.size_bytes());
  count(others, others, watch.seconds());
}

template <class T>
void communicator::reduce_scatter(std::span<const T> send, std::span<T> receive,
                                  std::span<const std::int64_t> counts, reduce_op op) {
  BULKGNN_EXPECTS(static_cast<int>(counts.size()) == size_,
                  "comm::reduce_scatter: {} counts for {} ranks", counts.size(), size_);
  std::int64_t total = 0;
  for (const auto c : counts) {
    BULKGNN_EXPECTS(c >= 0, "comm::reduce_scatter: a negative count, {}", c);
    total += c;
  }
  BULKGNN_EXPECTS(static_cast<std::int64_t>(send.size()) == total &&
                      static_cast<std::int64_t>(receive.size()) == counts[rank_],
                  "comm::reduce_scatter: send has {} elements for counts summing to {}, receive "
                  "{} for this rank's {}",
                  send.size(), total, receive.size(), counts[rank_]);
  const stopwatch watch;
  reduce_scatter_sized_blocks(bytes_of(send), writable_bytes_of(receive), counts, datatype_of<T>(),
                              op);
  const auto others = (total - counts[rank_]) * static_cast<std::int64_t>(sizeof(T));
  count(others, others, watch.seconds());
}

template <class T>
std::vector<T> communicator::all_gather(T value) {
  return all_gather(std::span<const T>(&value, 1));
}

template <class T>
std::vector<T> communicator::all_gather(std::span<const T> values) {
  const stopwatch watch;
  std::vector<T> all(values.size() * static_cast<std::size_t>(size_));
  const std::vector<std::int64_t> counts(size_, static_cast<std::int64_t>(values.size()));
  gather_v(bytes_of(values), writable_bytes_of(std::span<T>(all)), counts, sizeof(T));
  const auto others =
      static_cast<std::int64_t>(size_ - 1) * static_cast<std::int64_t>(values.size_bytes());
  count(others, others, watch.seconds());
  return all;
}

template <class T>
std::vector<T> communicator::all_gather_v(std::span<const T> values, const codec& wire) {
  std::vector<std::byte> encoded;
  if (!wire.is_identity()) encoded = wire.encode(bytes_of(values), element_info_of<T>());
  const auto mine = wire.is_identity() ? bytes_of(values) : std::span<const std::byte>(encoded);
  const auto unit = wire.is_identity() ? sizeof(T) : 1;
  const auto counts = all_gather(static_cast<std::int64_t>(mine.size() / unit));
  const stopwatch watch;
  std::int64_t everyone = 0;
  for (const auto c : counts) everyone += c;
  std::vector<std::byte> all(static_cast<std::size_t>(everyone) * unit);
  gather_v(mine, all, counts, unit);
  const auto others = static_cast<std::int64_t>(all.size() - mine.size());
  std::vector<T> gathered;
  if (wire.is_identity()) {
    gathered.resize(all.size() / sizeof(T));
    if (!all.empty()) std::memcpy(gathered.data(), all.data(), all.size());
  } else {
    auto next = all.begin();
    for (const auto c : counts) {
      const auto part =
          decoded<T>(wire, std::span<const std::byte>(next, next + c), "all_gather_v");
      gathered.insert(gathered.end(), part.begin(), part.end());
      next += c;
    }
  }
  count(others, others, watch.seconds());
  return gathered;
}

template <class T>
void communicator::all_gather_v(std::span<const T> mine, std::span<T> all,
                                std::span<const std::int64_t> counts) {
  BULKGNN_EXPECTS(static_cast<int>(counts.size()) == size_,
                  "comm::all_gather_v: {} counts for {} ranks", counts.size(), size_);
  std::int64_t total = 0;
  for (const auto c : counts) {
    BULKGNN_EXPECTS(c >= 0, "comm::all_gather_v: a negative count, {}", c);
    total += c;
  }
  BULKGNN_EXPECTS(static_cast<std::int64_t>(mine.size()) == counts[rank_] &&
                      static_cast<std::int64_t>(all.size()) == total,
                  "comm::all_gather_v: {} elements here for a count of {}, room for {} of {}",
                  mine.size(), counts[rank_], all.size(), total);
  const stopwatch watch;
  gather_v(bytes_of(mine), writable_bytes_of(all), counts, sizeof(T));
  const auto bytes = static_cast<std::int64_t>(sizeof(T));
  count(static_cast<std::int64_t>(size_ - 1) * counts[rank_] * bytes,
        (total - counts[rank_]) * bytes, watch.seconds());
}

template <class T>
void communicator::broadcast(std::span<T> values, int root, const codec& wire) {
  require_rank(root, "broadcast", "root");
  const stopwatch watch;
  if (wire.is_identity()) {
    broadcast_bytes(writable_bytes_of(values), root, sizeof(T));
    count_broadcast(static_cast<std::int64_t>(values.size_bytes()), root, watch.seconds());
    return;
  }
  std::vector<std::byte> encoded;
  if (rank_ == root)
    encoded = wire.encode(bytes_of(std::span<const T>(values)), element_info_of<T>());
  auto length = static_cast<std::int64_t>(encoded.size());
  broadcast_bytes(writable_bytes_of(std::span<std::int64_t>(&length, 1)), root, sizeof(length));
  encoded.resize(static_cast<std::size_t>(length));
  broadcast_bytes(encoded, root, 1);
  if (rank_ != root) {
    const auto raw = decoded<T>(wire, encoded, "broadcast");
    if (raw.size() != values.size())
      throw error(fmt::format("comm::broadcast: the root sent {} elements for {} here", raw.size(),
                              values.size()));
    std::copy(raw.begin(), raw.end(), values.begin());
  }
  count_broadcast(length + static_cast<std::int64_t>(sizeof(length)), root, watch.seconds());
}

template <class T>
void communicator::send(std::span<const T> values, int destination, int tag, const codec& wire) {
  require_rank(destination, "send", "destination");
  BULKGNN_EXPECTS(tag >= 0, "comm::send: tag {} is negative", tag);
  const stopwatch watch;
  std::int64_t bytes = static_cast<std::int64_t>(values.size_bytes());
  if (wire.is_identity()) {
    send_bytes(bytes_of(values), destination, tag, sizeof(T));
  } else {
    const auto encoded = wire.encode(bytes_of(values), element_info_of<T>());
    bytes = static_cast<std::int64_t>(encoded.size());
    send_bytes(encoded, destination, tag, 1);
  }
  count(destination == rank_ ? 0 : bytes, 0, watch.seconds());
}

template <class T>
void communicator::receive(std::span<T> values, int source, int tag, const codec& wire) {
  require_rank(source, "receive", "source");
  BULKGNN_EXPECTS(tag >= 0, "comm::receive: tag {} is negative", tag);
  const stopwatch watch;
  std::int64_t bytes = static_cast<std::int64_t>(values.size_bytes());
  if (wire.is_identity()) {
    receive_bytes(writable_bytes_of(values), source, tag, sizeof(T));
  } else {
    const auto encoded = receive_any_length(source, tag);
    bytes = static_cast<std::int64_t>(encoded.size());
    const auto raw = decoded<T>(wire, encoded, "receive");
    if (raw.size() != values.size())
      throw error(fmt::format("comm::receive: rank {} sent {} elements for {} here", source,
                              raw.size(), values.size()));
    std::copy(raw.begin(), raw.end(), values.begin());
  }
  count(0, source == rank_ ? 0 : bytes, watch.seconds());
}

template <class T>
request communicator::isend(std::span<const T> values, int destination, int tag) {
  require_rank(destination, "isend", "destination");
  BULKGNN_EXPECTS(tag >= 0, "comm::isend: tag {} is negative", tag);
  const stopwatch watch;
  const auto bytes = destination == rank_ ? 0 : static_cast<std::int64_t>(values.size_bytes());
  return {start_send(bytes_of(values), destination, tag, sizeof(T)),
          [this, bytes, watch] { count(bytes, 0, watch.seconds()); }};
}

template <class T>
request communicator::irecv(std::span<T> values, int source, int tag) {
  require_rank(source, "irecv", "source");
  BULKGNN_EXPECTS(tag >= 0, "comm::irecv: tag {} is negative", tag);
  const stopwatch watch;
  const auto bytes = source == rank_ ? 0 : static_cast<std::int64_t>(values.size_bytes());
  return {start_receive(writable_bytes_of(values), source, tag, sizeof(T)),
          [this, bytes, watch] { count(0, bytes, watch.seconds()); }};
}

}  // namespace bulkgnn::comm
