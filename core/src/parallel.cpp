#include "bulkgnn/core/parallel.hpp"

#include <tbb/global_control.h>

namespace bulkgnn {

// Built in place: a moved-from global_control would lift the limit again
// when the temporary dies.
struct thread_limit::control {
  explicit control(std::size_t threads)
      : limit(tbb::global_control::max_allowed_parallelism, threads) {}
  tbb::global_control limit;
};

thread_limit::thread_limit(int threads) {
  if (threads > 0) control_ = std::make_unique<control>(static_cast<std::size_t>(threads));
}

thread_limit::~thread_limit() = default;

}  // namespace bulkgnn
