#pragma once

#include <chrono>
#include <map>
#include <string>

namespace bulkgnn {

class stopwatch {
 public:
  stopwatch() : start_(clock::now()) {}
  void restart() { start_ = clock::now(); }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(clock::now() - start_).count();
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

// Accumulates wall time per named stage.
class stage_times {
 public:
  void add(const std::string& stage, double seconds);
  [[nodiscard]] double get(const std::string& stage) const;
  [[nodiscard]] const std::map<std::string, double>& all() const { return seconds_; }

 private:
  std::map<std::string, double> seconds_;
};

// Adds the lifetime of the scope to one stage of a stage_times.
class scoped_stage {
 public:
  scoped_stage(stage_times& times, std::string stage) : times_(times), stage_(std::move(stage)) {}
  ~scoped_stage() { times_.add(stage_, watch_.seconds()); }
  scoped_stage(const scoped_stage&) = delete;
  scoped_stage& operator=(const scoped_stage&) = delete;

 private:
  stage_times& times_;
  std::string stage_;
  stopwatch watch_;
};

}  // namespace bulkgnn
