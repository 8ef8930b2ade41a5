#include "bulkgnn/comm/device_communicator.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::comm {
namespace {

class host_communicator final : public device_communicator {
 public:
  explicit host_communicator(communicator& ranks) : ranks_(ranks) {}

  void all_reduce_sum(std::span<float> values) override { ranks_.all_reduce(values); }
  void all_to_all(std::span<const float> send, std::span<const std::int64_t> send_counts,
                  std::span<float> receive, std::span<const std::int64_t> receive_counts) override {
    ranks_.all_to_all(send, send_counts, receive, receive_counts);
  }
  [[nodiscard]] const char* name() const override { return "MPI"; }

 private:
  communicator& ranks_;
};

}  // namespace

std::unique_ptr<device_communicator> make_host_communicator(communicator& ranks) {
  return std::make_unique<host_communicator>(ranks);
}

bool every_rank_owns_a_gpu(communicator& ranks, const executor& exec) {
  std::array<char, 256> host{};
  (void)gethostname(host.data(), host.size() - 1);
  // (host, device) of this rank, or (0, -1) without a GPU.
  const std::array<std::uint64_t, 2> mine{std::hash<std::string>{}(std::string(host.data())),
                                          exec.device() != nullptr
                                              ? static_cast<std::uint64_t>(exec.device()->device())
                                              : ~std::uint64_t{0}};
  const auto all = ranks.all_gather(std::span<const std::uint64_t>(mine));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gpus;
  for (std::size_t r = 0; r + 1 < all.size(); r += 2) {
    if (all[r + 1] == ~std::uint64_t{0}) return false;
    gpus.emplace_back(all[r], all[r + 1]);
  }
  std::sort(gpus.begin(), gpus.end());
  return std::adjacent_find(gpus.begin(), gpus.end()) == gpus.end();
}

}  // namespace bulkgnn::comm
