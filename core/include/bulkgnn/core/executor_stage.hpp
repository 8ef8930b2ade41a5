#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/timer.hpp"

#include <memory>
#include <string>
#include <vector>

// Stage times of work queued on an executor. On the host back ends the host
// clock is the truth. A cuda executor's kernels run after the host queues
// them, so there each stage is also timed on the device, between two marks
// of the stream (CUDA events), and the device times are collected later,
// without stalling the stream in between.
namespace bulkgnn {

class device_stage_log {
 public:
  void record(std::string stage, std::shared_ptr<void> begin, std::shared_ptr<void> end);
  // Adds each recorded stage's device seconds to `times` and forgets them;
  // waits until `exec`'s stream has passed the last mark. Nothing for the
  // host back ends, whose stages record nothing here.
  void collect(const executor& exec, stage_times& times);

 private:
  struct entry {
    std::string stage;
    std::shared_ptr<void> begin;
    std::shared_ptr<void> end;
  };
  std::vector<entry> pending_;
};

// Adds the lifetime of the scope to `host` and, on a cuda executor, records
// the stream's work queued in it to `device`.
class executor_stage {
 public:
  executor_stage(const executor& exec, stage_times& host, device_stage_log& device,
                 std::string stage);
  ~executor_stage();
  executor_stage(const executor_stage&) = delete;
  executor_stage& operator=(const executor_stage&) = delete;

 private:
  device_context* context_;
  stage_times& host_;
  device_stage_log& device_;
  std::string stage_;
  std::shared_ptr<void> begin_;
  stopwatch watch_;
};

}  // namespace bulkgnn
