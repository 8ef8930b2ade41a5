#pragma once

#include "bulkgnn/data/link_split.hpp"
#include "bulkgnn/session/layout.hpp"
#include "bulkgnn/session/training.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bulkgnn::tools {

// `bulkgnn train --task link`: its settings, as the train command parsed
// them.
struct link_train_config {
  std::string data;
  trainer::train_options options;        // sampler, loader, model, optimiser, epochs, checkpoints
  data::link_split_options split;        // the random link split made on the fly
  std::string split_dir;                 // or the stored one read from here
  bool ranking_negatives_given = false;  // --ranking-negatives on the command line
  std::string select_by = "auto";        // --select-by: auto, hits or mrr
  session::link_training_plan plan;
  std::string metrics_out;
  int threads = 0;
  session::layout_options distribution;  // how DATA is opened
  nlohmann::json settings;               // the command's settings, for --metrics-out
  // What every MPI rank must give alike (checked before anything else).
  std::vector<session::setting> shared;
};

// Reads the link split stored at split_dir, or splits the dataset's edges
// as PyG's RandomLinkSplit does (and says so), trains an encoder and a link head on link
// minibatches, and prints each epoch's loss and OGB's Hits@K and MRR, then the best validation
// epoch;
// --metrics-out gets the same as JSON. Under mpirun every rank reads the
// whole dataset, makes the same split and trains on its slice of every
// minibatch; rank 0 prints and writes.
void run_link_train(const link_train_config& c);

}  // namespace bulkgnn::tools
