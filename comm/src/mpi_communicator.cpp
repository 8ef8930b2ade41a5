#include "bulkgnn/comm/mpi_communicator.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

namespace bulkgnn::comm {

namespace detail {
void check(int mpi_result, const char* call) {
  if (mpi_result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_result, text, &length);
  throw error(fmt::format("{} failed: {}", call, std::string(text, length)));
}
}  // namespace detail

namespace {

using detail::check;

// The MPI datatype of one element of `unit` bytes: a predefined type of
// that size where one exists (moving bits, not interpreting them), else a
// contiguous run of bytes, freed with the object.
class unit_type {
 public:
  explicit unit_type(std::size_t unit) {
    switch (unit) {
      case 1:
        type_ = MPI_BYTE;
        break;
      case 2:
        type_ = MPI_UINT16_T;
        break;
      case 4:
        type_ = MPI_UINT32_T;
        break;
      case 8:
        type_ = MPI_UINT64_T;
        break;
      default:
        check(MPI_Type_contiguous(static_cast<int>(unit), MPI_BYTE, &type_), "MPI_Type_contiguous");
        check(MPI_Type_commit(&type_), "MPI_Type_commit");
        owned_ = true;
    }
  }
  ~unit_type() {
    if (owned_) MPI_Type_free(&type_);
  }
  unit_type(const unit_type&) = delete;
  unit_type& operator=(const unit_type&) = delete;
  [[nodiscard]] MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool owned_ = false;
};

MPI_Datatype mpi_type(datatype type) {
  switch (type) {
    case datatype::i8:
      return MPI_INT8_T;
    case datatype::u8:
      return MPI_UINT8_T;
    case datatype::i32:
      return MPI_INT32_T;
    case datatype::u32:
      return MPI_UINT32_T;
    case datatype::i64:
      return MPI_INT64_T;
    case datatype::u64:
      return MPI_UINT64_T;
    case datatype::f32:
      return MPI_FLOAT;
    case datatype::f64:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum:
      return MPI_SUM;
    case reduce_op::max:
      return MPI_MAX;
    case reduce_op::min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

int mpi_count(std::int64_t count, const char* call) {
  if (count > std::numeric_limits<int>::max())
    throw error(fmt::format("{}: {} elements exceed MPI's int counts", call, count));
  return static_cast<int>(count);
}

int element_count(std::size_t bytes, std::size_t unit, const char* call) {
  return mpi_count(static_cast<std::int64_t>(bytes / unit), call);
}

// Counts and displacements of a "v" collective, as MPI's ints.
struct layout {
  std::vector<int> counts, offsets;
  layout(std::span<const std::int64_t> sizes, const char* call) {
    std::int64_t offset = 0;
    for (const auto size : sizes) {
      counts.push_back(mpi_count(size, call));
      offsets.push_back(mpi_count(offset, call));
      offset += size;
    }
    mpi_count(offset, call);
  }
};

class mpi_pending final : public request::pending {
 public:
  explicit mpi_pending(std::unique_ptr<unit_type> type = nullptr) : type_(std::move(type)) {}
  ~mpi_pending() override {
    if (handle_ != MPI_REQUEST_NULL) MPI_Wait(&handle_, MPI_STATUS_IGNORE);
  }
  MPI_Request* handle() { return &handle_; }
  bool test() override {
    int flag = 0;
    check(MPI_Test(&handle_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    return flag != 0;
  }
  void wait() override { check(MPI_Wait(&handle_, MPI_STATUS_IGNORE), "MPI_Wait"); }

 private:
  MPI_Request handle_ = MPI_REQUEST_NULL;
  std::unique_ptr<unit_type> type_;  // alive until the operation ends
};

}  // namespace

mpi_communicator::mpi_communicator(MPI_Comm parent, std::string stage, traffic_log& log)
    : mpi_communicator(
          adopt{},
          [parent] {
            MPI_Comm copy = MPI_COMM_NULL;
            check(MPI_Comm_dup(parent, &copy), "MPI_Comm_dup");
            return copy;
          }(),
          std::move(stage), log) {}

mpi_communicator::mpi_communicator(adopt, MPI_Comm owned, std::string stage, traffic_log& log)
    : communicator(rank_in(owned), size_of(owned), std::move(stage), log), comm_(owned) {}

mpi_communicator::~mpi_communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

int mpi_communicator::rank_in(MPI_Comm comm) {
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int mpi_communicator::size_of(MPI_Comm comm) {
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

std::unique_ptr<communicator> mpi_communicator::split(int colour, int key,
                                                      const std::string& stage) const {
  MPI_Comm part = MPI_COMM_NULL;
  check(MPI_Comm_split(comm_, colour, key, &part), "MPI_Comm_split");
  return std::unique_ptr<communicator>(new mpi_communicator(adopt{}, part, stage, log()));
}

std::unique_ptr<communicator> mpi_communicator::duplicate(const std::string& stage,
                                                          traffic_log& log) const {
  return std::make_unique<mpi_communicator>(comm_, stage, log);
}

void mpi_communicator::exchange_v(std::span<const std::byte> send,
                                  std::span<const std::int64_t> send_counts,
                                  std::span<std::byte> receive,
                                  std::span<const std::int64_t> receive_counts, std::size_t unit) {
  const unit_type type(unit);
  const layout out(send_counts, "MPI_Alltoallv");
  const layout in(receive_counts, "MPI_Alltoallv");
  check(MPI_Alltoallv(send.data(), out.counts.data(), out.offsets.data(), type.get(),
                      receive.data(), in.counts.data(), in.offsets.data(), type.get(), comm_),
        "MPI_Alltoallv");
}

void mpi_communicator::gather_v(std::span<const std::byte> mine, std::span<std::byte> all,
                                std::span<const std::int64_t> counts, std::size_t unit) {
  const unit_type type(unit);
  const layout in(counts, "MPI_Allgatherv");
  check(MPI_Allgatherv(mine.data(), element_count(mine.size(), unit, "MPI_Allgatherv"), type.get(),
                       all.data(), in.counts.data(), in.offsets.data(), type.get(), comm_),
        "MPI_Allgatherv");
}

void mpi_communicator::reduce_in_place(std::span<std::byte> values, datatype type, reduce_op op) {
  const auto t = mpi_type(type);
  int element = 0;
  check(MPI_Type_size(t, &element), "MPI_Type_size");
  check(MPI_Allreduce(
            MPI_IN_PLACE, values.data(),
            element_count(values.size(), static_cast<std::size_t>(element), "MPI_Allreduce"), t,
            mpi_op(op), comm_),
        "MPI_Allreduce");
}

std::unique_ptr<request::pending> mpi_communicator::start_reduce_in_place(
    std::span<std::byte> values, datatype type, reduce_op op) {
  const auto t = mpi_type(type);
  int element = 0;
  check(MPI_Type_size(t, &element), "MPI_Type_size");
  auto started = std::make_unique<mpi_pending>();
  check(MPI_Iallreduce(
            MPI_IN_PLACE, values.data(),
            element_count(values.size(), static_cast<std::size_t>(element), "MPI_Iallreduce"), t,
            mpi_op(op), comm_, started->handle()),
        "MPI_Iallreduce");
  return started;
}

void mpi_communicator::reduce_scatter_blocks(std::span<const std::byte> send,
                                             std::span<std::byte> receive, datatype type,
                                             reduce_op op) {
  const auto t = mpi_type(type);
  int element = 0;
  check(MPI_Type_size(t, &element), "MPI_Type_size");
  check(MPI_Reduce_scatter_block(send.data(), receive.data(),
                                 element_count(receive.size(), static_cast<std::size_t>(element),
                                               "MPI_Reduce_scatter_block"),
                                 t, mpi_op(op), comm_),
        "MPI_Reduce_scatter_block");
}

void mpi_communicator::reduce_scatter_sized_blocks(std::span<const std::byte> send,
                                                   std::span<std::byte> receive,
                                                   std::span<const std::int64_t> counts,
                                                   datatype type, reduce_op op) {
  const layout blocks(counts, "MPI_Reduce_scatter");
  check(MPI_Reduce_scatter(send.data(), receive.data(), blocks.counts.data(), mpi_type(type),
                           mpi_op(op), comm_),
        "MPI_Reduce_scatter");
}

void mpi_communicator::broadcast_bytes(std::span<std::byte> values, int root, std::size_t unit) {
  const unit_type type(unit);
  check(MPI_Bcast(values.data(), element_count(values.size(), unit, "MPI_Bcast"), type.get(), root,
                  comm_),
        "MPI_Bcast");
}

void mpi_communicator::send_bytes(std::span<const std::byte> values, int destination, int tag,
                                  std::size_t unit) {
  const unit_type type(unit);
  check(MPI_Send(values.data(), element_count(values.size(), unit, "MPI_Send"), type.get(),
                 destination, tag, comm_),
        "MPI_Send");
}

void mpi_communicator::receive_bytes(std::span<std::byte> values, int source, int tag,
                                     std::size_t unit) {
  const unit_type type(unit);
  const int expected = element_count(values.size(), unit, "MPI_Recv");
  MPI_Status status;
  check(MPI_Recv(values.data(), expected, type.get(), source, tag, comm_, &status), "MPI_Recv");
  int arrived = 0;
  check(MPI_Get_count(&status, type.get(), &arrived), "MPI_Get_count");
  if (arrived != expected)
    throw error(fmt::format("comm::receive: rank {} sent {} elements with tag {} for {} here",
                            source, arrived, tag, expected));
}

std::vector<std::byte> mpi_communicator::receive_any_length(int source, int tag) {
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  check(MPI_Mprobe(source, tag, comm_, &message, &status), "MPI_Mprobe");
  int length = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &length), "MPI_Get_count");
  std::vector<std::byte> bytes(static_cast<std::size_t>(length));
  check(MPI_Mrecv(bytes.data(), length, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
  return bytes;
}

std::unique_ptr<request::pending> mpi_communicator::start_send(std::span<const std::byte> values,
                                                               int destination, int tag,
                                                               std::size_t unit) {
  auto type = std::make_unique<unit_type>(unit);
  const auto t = type->get();
  auto started = std::make_unique<mpi_pending>(std::move(type));
  check(MPI_Isend(values.data(), element_count(values.size(), unit, "MPI_Isend"), t, destination,
                  tag, comm_, started->handle()),
        "MPI_Isend");
  return started;
}

std::unique_ptr<request::pending> mpi_communicator::start_receive(std::span<std::byte> values,
                                                                  int source, int tag,
                                                                  std::size_t unit) {
  auto type = std::make_unique<unit_type>(unit);
  const auto t = type->get();
  auto started = std::make_unique<mpi_pending>(std::move(type));
  check(MPI_Irecv(values.data(), element_count(values.size(), unit, "MPI_Irecv"), t, source, tag,
                  comm_, started->handle()),
        "MPI_Irecv");
  return started;
}

void mpi_communicator::wait_for_every_rank() { check(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace bulkgnn::comm
