#include "bulkgnn/comm/traffic.hpp"

namespace bulkgnn::comm {

traffic& traffic::operator+=(const traffic& other) {
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  calls += other.calls;
  seconds += other.seconds;
  return *this;
}

void traffic_log::add(const std::string& stage, const traffic& t) {
  const std::lock_guard lock(mutex_);
  stages_[stage] += t;
}

std::map<std::string, traffic> traffic_log::all() const {
  const std::lock_guard lock(mutex_);
  return stages_;
}

}  // namespace bulkgnn::comm
