#pragma once

#include "bulkgnn/comm/communicator.hpp"

#include <string>
#include <vector>

namespace bulkgnn::distributed {

// A setting that every rank of a run must share: its name as the user knows
// it and its value in a canonical text form (equal values, equal texts).
struct shared_setting {
  std::string name;
  std::string value;
};

// Checks that every rank of `ranks` passed the same settings (same names and
// values, in any order). Collective, and safe as the first collective of
// a run: one all-gather of a fixed-size hash per rank, so ranks that
// disagree cannot wait on each other; only when the hashes differ, which
// every rank then knows, an all-gather of each rank's settings to name what
// differs. On a difference throws collective_error, on every rank alike,
// naming each differing setting and which ranks hold which value.
void require_same_settings(comm::communicator& ranks, const std::vector<shared_setting>& settings);

// The message for settings that differ between ranks (by_rank[r]: rank r's
// settings), e.g. "the ranks disagree on --epochs (3 on ranks 0, 2-3; 5 on
// rank 1)"; empty if every rank has the same.
[[nodiscard]] std::string describe_disagreement(
    const std::vector<std::vector<shared_setting>>& by_rank);

}  // namespace bulkgnn::distributed
