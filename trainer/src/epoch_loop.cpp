#include "bulkgnn/trainer/epoch_loop.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/hash.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace bulkgnn::trainer {

void best_validation::offer(std::int64_t epoch, const std::optional<double>& valid_acc,
                            const std::optional<double>& test_acc) {
  if (!valid_acc || (best_epoch && !(*valid_acc > best_valid_acc))) return;
  best_epoch = epoch;
  best_valid_acc = *valid_acc;
  test_acc_at_best = test_acc.value_or(0.0);
}

bool evaluates_after(std::int64_t epoch, std::int64_t epochs, std::int64_t eval_every) {
  return eval_every > 0 && ((epoch + 1) % eval_every == 0 || epoch + 1 == epochs);
}

void require_same_weights(comm::communicator& ranks, std::span<const float> parameters,
                          std::string_view run) {
  digest_hasher hash;
  for (const float w : parameters) hash.add(std::bit_cast<std::uint32_t>(w));
  const auto digests = ranks.all_gather(std::bit_cast<std::int64_t>(hash.value()));
  const auto differing = std::ranges::count_if(
      digests, [&](std::int64_t digest) { return digest != digests.front(); });
  if (differing != 0)
    throw internal_error(
        fmt::format("{}: {} rank(s) ended with other weights than rank 0", run, differing));
}

}  // namespace bulkgnn::trainer
