#include "bulkgnn/core/parallel.hpp"

#include <tbb/global_control.h>

namespace bulkgnn {

struct thread_limit::control {
  tbb::global_control limit;
};

thread_limit::thread_limit(int threads) {
  if (threads > 0)
    control_ = std::make_unique<control>(control{tbb::global_control(
        tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads))});
}

thread_limit::~thread_limit() = default;

}  // namespace bulkgnn
