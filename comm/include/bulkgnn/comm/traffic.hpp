#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace bulkgnn::comm {

// What one rank sent to and received from the other ranks in one stage:
// bytes on the wire (after the codec, if any), collective calls, and the
// seconds spent in them. Bytes a rank keeps for itself are not counted. The
// rule of each collective is documented at its declaration in
// communicator.hpp; they are the volumes the cost model predicts
// (distributed/cost_model.hpp).
struct traffic {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t calls = 0;
  double seconds = 0;

  traffic& operator+=(const traffic& other);
};

// Per-stage traffic of one rank; thread-safe, since pipeline stages
// communicate from their own threads.
class traffic_log {
 public:
  void add(const std::string& stage, const traffic& t);
  [[nodiscard]] std::map<std::string, traffic> all() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, traffic> stages_;
};

}  // namespace bulkgnn::comm
