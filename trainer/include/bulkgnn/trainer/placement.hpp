#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::trainer {

// Whether the model's executor should work on a copy of data in `space`, in
// its own memory. A host executor reads host and pinned memory alike, so
// neither moves; a cuda executor gets device copies of host and pinned data,
// which a train step reads many times (through the bus each time otherwise).
// Device data for a host executor is an error: it must be copied back by
// whoever knows its resource.
[[nodiscard]] bool needs_placing(const executor& exec, memory_space space);

// `values`, which live in `space`, where `exec`'s kernels should read them:
// the caller's memory when it is right already, else a copy in exec.memory()
// that this object owns. Moving keeps the span valid.
template <class T>
class placed {
 public:
  placed(const executor& exec, std::span<const T> values, memory_space space) {
    if (!needs_placing(exec, space)) {
      values_ = values;
      space_ = space;
      return;
    }
    copy_ = copy_to(values, exec.memory());
    values_ = {copy_.data(), copy_.size()};
    space_ = copy_.space();
  }
  // A copy would view the original's copy.
  placed(const placed&) = delete;
  placed& operator=(const placed&) = delete;
  placed(placed&&) noexcept = default;
  placed& operator=(placed&&) noexcept = default;

  [[nodiscard]] std::span<const T> span() const { return values_; }
  [[nodiscard]] memory_space space() const { return space_; }

 private:
  buffer<T> copy_;
  std::span<const T> values_;
  memory_space space_ = memory_space::host;
};

// A dense matrix placed for `exec`, as placed<float> does.
class placed_matrix {
 public:
  placed_matrix(const executor& exec, dense_view<const float> m)
      : rows_(m.rows), cols_(m.cols), values_(exec, m.data, m.space) {}

  [[nodiscard]] dense_view<const float> view() const {
    return {rows_, cols_, values_.span(), values_.space()};
  }

 private:
  std::int64_t rows_;
  std::int64_t cols_;
  placed<float> values_;
};

// A copy of host-readable `m` in exec.memory(), its indptr rebased to start
// from 0 (`m` may be some rows of a larger matrix).
[[nodiscard]] csr_matrix copy_for(const executor& exec, csr_view m);

}  // namespace bulkgnn::trainer
