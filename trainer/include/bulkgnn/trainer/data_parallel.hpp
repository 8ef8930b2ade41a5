#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <functional>
#include <string>

namespace bulkgnn::trainer {

// The ranks of a data-parallel run, as the trainer sees them. Every rank
// trains on its slice of each global minibatch (loader_options::slice) and
// the gradients, scaled by the slice's share of the minibatch's seeds, are
// summed over `ranks`: one step is the single-process step on the whole
// minibatch, up to the order of float sums.
struct data_parallel {
  // Sums gradients and metrics, and compares the final weights: a context of
  // its own, since the loader's stages communicate on theirs meanwhile.
  comm::communicator* ranks = nullptr;
  // Sums gradients that live in a GPU's memory, on the model's stream, when
  // every rank owns a GPU (NCCL); nullptr: over `ranks`, through host memory.
  comm::device_communicator* device_gradients = nullptr;
  // The loader's sample stage samples each minibatch's part with the other
  // ranks over this context (layer-wise samplers; the row fetches of a
  // sharded graph use it too), on that stage's thread alone.
  comm::communicator* sampling = nullptr;
  // Where the loader reads rows of A and input features (nullptr: from the
  // dataset in this process).
  sampler::row_source* rows = nullptr;
  loader::feature_fetcher* features = nullptr;
  // Ends every rank with this message. Called on a pipeline stage's thread
  // when the stage fails, since the other ranks may be waiting for this one
  // in a collective call; empty: the failure reaches train()'s caller.
  std::function<void(const std::string& message)> abort_all;
};

}  // namespace bulkgnn::trainer
