#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/loader/stage.hpp"

#include <memory>

namespace bulkgnn::loader {

// The pipeline's host-to-device stage (loader_options::host_to_device):
// copies each ready minibatch's arrays (seeds, labels, input nodes, blocks
// and feature rows) into `copy_exec`'s memory and hands the minibatch on
// with them there, so that a trainer on a GPU finds it in device memory.
// `copy_exec` should have a stream of its own (a cuda executor of its own
// on the trainer's device), so that copies overlap the train step's
// kernels; each copy has landed when the minibatch is handed on. Buffers
// allocated on that stream are freed on it too: whoever reads a minibatch on
// another stream must wait for that work before dropping it.
[[nodiscard]] std::unique_ptr<stage> make_host_to_device_stage(executor copy_exec);

}  // namespace bulkgnn::loader
