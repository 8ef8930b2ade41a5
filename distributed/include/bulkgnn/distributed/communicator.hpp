#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace bulkgnn::distributed {

// What one rank sent to and received from the other ranks in one stage.
// Bytes a rank keeps for itself are not counted. Collectives count the
// volume of their bandwidth-optimal algorithm, which is what the cost model
// predicts (docs in cost_model.hpp): all-to-all the bytes addressed to each
// other rank; all-reduce of N bytes 2(P-1)/P·N each way (ring); all-gather
// the other ranks' contributions each way.
struct traffic {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t calls = 0;
  double seconds = 0;

  traffic& operator+=(const traffic& other);
};

// Per-stage traffic of one rank; thread-safe, since pipeline stages
// communicate from their own threads.
class traffic_log {
 public:
  void add(const std::string& stage, const traffic& t);
  [[nodiscard]] std::map<std::string, traffic> all() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, traffic> stages_;
};

namespace detail {
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return MPI_UINT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else
    static_assert(sizeof(T) == 0, "no MPI type for this element type");
}
void check(int mpi_result, const char* call);
}  // namespace detail

// One MPI communicator owned by one pipeline stage ("sampling", "features",
// "gradients", ...): a duplicate of its parent, so stages that run at the
// same time on different threads never mix messages. Every exchange counts
// its bytes into the stage's entry of a traffic_log. Collective calls must
// be made by every rank of the communicator in the same order.
class communicator {
 public:
  communicator(MPI_Comm parent, std::string stage, traffic_log& log);
  ~communicator();
  communicator(communicator&& other) noexcept;
  communicator& operator=(communicator&&) = delete;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] MPI_Comm handle() const { return comm_; }
  [[nodiscard]] const std::string& stage() const { return stage_; }
  [[nodiscard]] traffic_log& log() const { return *log_; }

  // The ranks with the same colour, ordered by key, as a new communicator
  // counted under `stage`.
  [[nodiscard]] communicator split(int colour, int key, const std::string& stage) const;

  // send[d] goes to rank d; returns what each rank sent here, by source.
  template <class T>
  [[nodiscard]] std::vector<std::vector<T>> all_to_all(const std::vector<std::vector<T>>& send);

  template <class T>
  void all_reduce_sum(std::span<T> values);
  template <class T>
  [[nodiscard]] T all_reduce_max(T value);

  // Every rank's `value`, by rank.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather(T value);
  // Every rank's `values`, concatenated in rank order.
  template <class T>
  [[nodiscard]] std::vector<T> all_gather_concatenated(std::span<const T> values);

  void barrier();

 private:
  communicator(MPI_Comm owned, std::string stage, traffic_log& log, bool);
  void count(std::int64_t sent, std::int64_t received, double seconds);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string stage_;
  traffic_log* log_;
  int rank_ = 0;
  int size_ = 1;
};

// Wall time of MPI calls (MPI_Wtime).
[[nodiscard]] double wall_seconds();

template <class T>
std::vector<std::vector<T>> communicator::all_to_all(const std::vector<std::vector<T>>& send) {
  const double start = wall_seconds();
  std::vector<int> send_counts(size_), receive_counts(size_), send_offsets(size_ + 1, 0),
      receive_offsets(size_ + 1, 0);
  for (int d = 0; d < size_; ++d) {
    detail::check(send[d].size() <= 0x7FFFFFFF ? MPI_SUCCESS : MPI_ERR_COUNT,
                  "all_to_all: more than 2^31 elements to one rank");
    send_counts[d] = static_cast<int>(send[d].size());
  }
  detail::check(
      MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm_),
      "MPI_Alltoall");
  std::vector<T> send_buffer;
  for (int d = 0; d < size_; ++d) {
    send_offsets[d + 1] = send_offsets[d] + send_counts[d];
    receive_offsets[d + 1] = receive_offsets[d] + receive_counts[d];
    send_buffer.insert(send_buffer.end(), send[d].begin(), send[d].end());
  }
  std::vector<T> receive_buffer(static_cast<std::size_t>(receive_offsets[size_]));
  detail::check(MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_offsets.data(),
                              detail::mpi_type<T>(), receive_buffer.data(), receive_counts.data(),
                              receive_offsets.data(), detail::mpi_type<T>(), comm_),
                "MPI_Alltoallv");
  std::vector<std::vector<T>> received(size_);
  std::int64_t sent_bytes = 0, received_bytes = 0;
  for (int s = 0; s < size_; ++s) {
    received[s].assign(receive_buffer.begin() + receive_offsets[s],
                       receive_buffer.begin() + receive_offsets[s + 1]);
    if (s == rank_) continue;
    // Each count is one 4-byte int each way, then the data.
    sent_bytes += 4 + static_cast<std::int64_t>(send_counts[s]) * sizeof(T);
    received_bytes += 4 + static_cast<std::int64_t>(receive_counts[s]) * sizeof(T);
  }
  count(sent_bytes, received_bytes, wall_seconds() - start);
  return received;
}

template <class T>
void communicator::all_reduce_sum(std::span<T> values) {
  const double start = wall_seconds();
  detail::check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                              detail::mpi_type<T>(), MPI_SUM, comm_),
                "MPI_Allreduce");
  const auto bytes = static_cast<std::int64_t>(values.size() * sizeof(T));
  const auto ring = size_ > 1 ? 2 * (size_ - 1) * bytes / size_ : 0;
  count(ring, ring, wall_seconds() - start);
}

template <class T>
T communicator::all_reduce_max(T value) {
  const double start = wall_seconds();
  detail::check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, detail::mpi_type<T>(), MPI_MAX, comm_),
                "MPI_Allreduce");
  const auto ring = size_ > 1 ? static_cast<std::int64_t>(2 * (size_ - 1) * sizeof(T) / size_) : 0;
  count(ring, ring, wall_seconds() - start);
  return value;
}

template <class T>
std::vector<T> communicator::all_gather(T value) {
  const double start = wall_seconds();
  std::vector<T> all(static_cast<std::size_t>(size_));
  detail::check(
      MPI_Allgather(&value, 1, detail::mpi_type<T>(), all.data(), 1, detail::mpi_type<T>(), comm_),
      "MPI_Allgather");
  const auto others = static_cast<std::int64_t>((size_ - 1) * sizeof(T));
  count(others, others, wall_seconds() - start);
  return all;
}

template <class T>
std::vector<T> communicator::all_gather_concatenated(std::span<const T> values) {
  const auto sizes = all_gather(static_cast<std::int64_t>(values.size()));
  const double start = wall_seconds();
  std::vector<int> counts(size_), offsets(size_ + 1, 0);
  for (int r = 0; r < size_; ++r) {
    counts[r] = static_cast<int>(sizes[r]);
    offsets[r + 1] = offsets[r] + counts[r];
  }
  std::vector<T> all(static_cast<std::size_t>(offsets[size_]));
  detail::check(
      MPI_Allgatherv(values.data(), static_cast<int>(values.size()), detail::mpi_type<T>(),
                     all.data(), counts.data(), offsets.data(), detail::mpi_type<T>(), comm_),
      "MPI_Allgatherv");
  const auto mine = static_cast<std::int64_t>(values.size() * sizeof(T));
  const auto everyone = static_cast<std::int64_t>(all.size() * sizeof(T));
  count(everyone - mine, everyone - mine, wall_seconds() - start);
  return all;
}

}  // namespace bulkgnn::distributed
