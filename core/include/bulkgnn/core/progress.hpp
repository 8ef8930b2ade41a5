#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "bulkgnn/core/timer.hpp"

namespace bulkgnn {

// Reports progress of long work: a redrawn bar with rate and ETA when stderr
// is a terminal, otherwise a plain line every few seconds. Silent if quiet.
class progress {
 public:
  progress(std::string label, std::int64_t total, std::string unit = "", bool quiet = false);
  ~progress();
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  // Sets the amount done so far (monotone; cheap when nothing is redrawn).
  void update(std::int64_t done);
  // Prints the final line with the elapsed time (skipped for work that took
  // under a second and drew nothing).
  void finish();

 private:
  void draw(bool final_line);

  std::string label_;
  std::string unit_;
  std::int64_t total_;
  std::int64_t done_ = 0;
  bool quiet_;
  bool terminal_;
  bool finished_ = false;
  stopwatch watch_;
  double last_draw_ = -1e9;
};

// Makes every progress display created after it silent, whatever its own
// `quiet`: the CLI's --quiet reaches work whose caller takes no quiet
// argument (the on-the-fly OGB import inside dataset::open).
void silence_progress();

}  // namespace bulkgnn
