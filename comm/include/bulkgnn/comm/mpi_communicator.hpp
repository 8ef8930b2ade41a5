#pragma once

#include "bulkgnn/comm/communicator.hpp"

#include <mpi.h>

#include <memory>
#include <string>

namespace bulkgnn::comm {

namespace detail {
// Throws error naming `call` (e.g. "MPI_Alltoallv") unless it succeeded.
void check(int mpi_result, const char* call);
}  // namespace detail

// A communicator over an MPI communicator of its own (a duplicate of its
// parent, or a split), so that stages on different threads never mix
// messages. Needs MPI initialised with MPI_THREAD_MULTIPLE when stages run
// concurrently; every MPI call is checked.
class mpi_communicator final : public communicator {
 public:
  mpi_communicator(MPI_Comm parent, std::string stage, traffic_log& log);
  ~mpi_communicator() override;

  // For libraries that speak MPI themselves (CombBLAS); their traffic is
  // theirs to count.
  [[nodiscard]] MPI_Comm handle() const { return comm_; }

  [[nodiscard]] std::unique_ptr<communicator> split(int colour, int key,
                                                    const std::string& stage) const override;
  [[nodiscard]] std::unique_ptr<communicator> duplicate(const std::string& stage,
                                                        traffic_log& log) const override;

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
  struct adopt {};
  mpi_communicator(adopt, MPI_Comm owned, std::string stage, traffic_log& log);
  static int rank_in(MPI_Comm comm);
  static int size_of(MPI_Comm comm);

  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace bulkgnn::comm
