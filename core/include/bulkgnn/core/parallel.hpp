#pragma once

#include <memory>

namespace bulkgnn {

// Limits the worker threads every kernel may use while it is alive.
// threads <= 0 keeps the default (all cores).
class thread_limit {
 public:
  explicit thread_limit(int threads);
  ~thread_limit();
  thread_limit(const thread_limit&) = delete;
  thread_limit& operator=(const thread_limit&) = delete;

 private:
  struct control;
  std::unique_ptr<control> control_;
};

}  // namespace bulkgnn
