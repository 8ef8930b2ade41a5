#pragma once

#include "bulkgnn/session/session.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bulkgnn::tools {

// `bulkgnn train --mode full-batch`: its settings, as the train command
// parsed them.
struct full_batch_config {
  std::string data;
  std::string split;
  std::string model = "gcn";
  int layers = 2;
  std::int64_t hidden = 256;
  float dropout = 0.5f;
  std::string gemm;  // --gemm; empty: the back end's default
  float lr = 0.01f;
  float weight_decay = 0.0f;
  std::string normalize_features = "none";
  std::int64_t epochs = 200;
  std::int64_t eval_every = 1;
  std::uint32_t seed = 0;
  int threads = 0;
  std::string backend = "cpu";
  std::string metrics_out;
  bool quiet = false;
  std::string grid = "1d";
  int replication = 1;
  std::string partition = "block";
  std::string compress = "none";
  // What every rank must give alike (checked before anything else).
  std::vector<session::setting> shared;
};

// Trains on the whole graph every epoch over the MPI ranks (or alone),
// printing an epoch per line and a summary with each stage's bytes next to
// the grid's closed forms; --metrics-out gets the same as JSON.
void run_full_batch_train(const full_batch_config& c);

}  // namespace bulkgnn::tools
