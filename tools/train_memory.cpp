#include "train_memory.hpp"

#include "bulkgnn/trainer/layer_table.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include <fmt/format.h>

#include <string>

namespace bulkgnn::tools {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

namespace {

// The cost model's workload for a training run: the model and how its
// minibatches grow, from the options, the sampler and layer tables and the
// dataset's sizes.
distributed::cost::workload workload_of(const trainer::training_data& ds,
                                        const trainer::train_options& o) {
  const auto& entry = sampler::find_sampler(o.sampling.kind);
  return {.batch_size = o.loading.batch_size,
          .fanouts = o.sampling.fanouts,
          .features = o.node_embedding > 0 ? o.node_embedding : ds.feature_dim,
          .hidden = o.model.hidden,
          .classes = ds.num_classes,
          .layers = o.model.layers,
          .root_weight = trainer::find_layer(trainer::layer_for(o)).has_root_weight(),
          .fanout_per_destination = entry.fanout == sampler::fanout_unit::per_destination,
          .any_depth = entry.any_depth};
}

// The table, its gradient and Adam's two moments, 4 bytes an entry each.
double embedding_table_bytes(const trainer::training_data& ds, std::int64_t width) {
  return 16.0 * static_cast<double>(ds.num_nodes) * static_cast<double>(width);
}

}  // namespace

distributed::cost::training_memory estimate_train_memory(const trainer::training_data& ds,
                                                         const trainer::train_options& o) {
  return distributed::cost::training_memory_of(
      workload_of(ds, o), ds.num_nodes, o.eval == trainer::evaluation::full && o.eval_every > 0);
}

void require_memory_for_embedding(const trainer::training_data& ds, std::int64_t width,
                                  const executor& model) {
  const double table_bytes = embedding_table_bytes(ds, width);
  const auto* gpu = model.device();
  const double available =
      gpu == nullptr ? available_memory_bytes()
                     : static_cast<double>(kernels::visible_cuda_devices()
                                               .at(static_cast<std::size_t>(gpu->device()))
                                               .memory_bytes);
  BULKGNN_EXPECTS(table_bytes < available,
                  "--node-embedding {}: {} vertices make a table that needs {:.1f} GiB with its "
                  "gradient and Adam's moments (on every rank), more than the {:.1f} GiB {}; "
                  "lower it",
                  width, ds.num_nodes, table_bytes / gib, available / gib,
                  gpu == nullptr
                      ? std::string("available")
                      : fmt::format("of GPU {}'s memory, where it lives", gpu->device()));
}

void require_memory_for(const trainer::training_data& ds, const trainer::train_options& o) {
  const auto& model = trainer::model_executor(o);
  if (o.node_embedding > 0) require_memory_for_embedding(ds, o.node_embedding, model);
  // On a GPU the table takes the device's memory, not the host's.
  const double table = o.node_embedding > 0 && model.device() == nullptr
                           ? embedding_table_bytes(ds, o.node_embedding)
                           : 0;
  auto m = estimate_train_memory(ds, o);
  m.model += table;
  const double available = available_memory_bytes();
  if (m.total() <= available) return;
  std::string culprit = fmt::format(
      "lower --hidden (model state {:.1f} GiB: weights, gradients, "
      "Adam moments for {} input features)",
      m.model / gib, o.node_embedding > 0 ? o.node_embedding : ds.feature_dim);
  if (table > 0 && 2 * table >= m.model)
    culprit = fmt::format(
        "lower --node-embedding (the table {:.1f} GiB with its gradient and Adam's moments)",
        table / gib);
  if (m.minibatch > m.model && m.minibatch >= m.evaluation)
    culprit = fmt::format("lower --batch-size, --fanouts or --hidden (one minibatch {:.1f} GiB)",
                          m.minibatch / gib);
  else if (m.evaluation > m.model)
    culprit = fmt::format(
        "use --eval sampled or lower --hidden (full-graph evaluation over {} "
        "vertices {:.1f} GiB)",
        ds.num_nodes, m.evaluation / gib);
  throw option_error(fmt::format(
      "--hidden {} with --batch-size {} and --fanouts {}: the run needs at least {:.1f} GiB, "
      "more than the {:.1f} GiB of memory available; {}",
      o.model.hidden, o.loading.batch_size, fmt::join(o.sampling.fanouts, ","), m.total() / gib,
      available / gib, culprit));
}

}  // namespace bulkgnn::tools
