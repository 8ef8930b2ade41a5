#include "bulkgnn/session/layout.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"

namespace bulkgnn::session {

using trainer::evaluation_plan;
using trainer::evaluation_route;
using trainer::model_executor;
using trainer::train_options;
using trainer::training_data;

memory_space gpu_space_for(const executor& exec, double bytes, double share) {
  BULKGNN_EXPECTS(exec.device() != nullptr, "gpu_space_for: a {} executor has no GPU",
                  backend_name(exec.kind()));
  const auto device_bytes =
      static_cast<double>(kernels::visible_cuda_devices()
                              .at(static_cast<std::size_t>(exec.device()->device()))
                              .memory_bytes);
  return bytes <= device_bytes * share ? memory_space::device : memory_space::pinned_host;
}

namespace {

double graph_bytes(const training_data& ds) {
  return static_cast<double>(ds.graph.indptr.size_bytes() + ds.graph.indices.size_bytes());
}

double feature_bytes(const training_data& ds) {
  return static_cast<double>(ds.features.data.size_bytes());
}

bool fits_on_gpu(const training_data& ds, const executor& gpu) {
  return gpu_space_for(gpu, graph_bytes(ds), graph_share_of_gpu) == memory_space::device &&
         gpu_space_for(gpu, feature_bytes(ds), feature_share_of_gpu) == memory_space::device;
}

evaluation_plan evaluation_for(const training_data& ds, const train_options& o) {
  if (o.eval != trainer::evaluation::full) return {};
  const executor& model = model_executor(o);
  if (model.device() == nullptr)
    return o.parallel != nullptr && o.parallel->ranks->size() > 1
               ? evaluation_plan{.route = evaluation_route::shares}
               : evaluation_plan{};
  if (o.eval_piece_rows > 0)
    return {.route = evaluation_route::pieces, .piece_rows = o.eval_piece_rows};
  // A part of a partitioned dataset cannot evaluate the full graph on a GPU;
  // the trainer refuses the run with a message that says so.
  if (!ds.whole || fits_on_gpu(ds, model)) return {};
  return {.route = evaluation_route::pieces, .piece_rows = default_eval_piece_rows};
}

}  // namespace

training_layout layout_for(const training_data& ds, const train_options& o) {
  training_layout layout;
  const executor& model = model_executor(o);
  if (o.exec.device() != nullptr) {
    BULKGNN_EXPECTS(o.parallel == nullptr,
                    "train_options.exec: sampling on the GPU under mpirun is not supported yet "
                    "(sample on the cpu: --sample-on cpu)");
    BULKGNN_EXPECTS(ds.whole,
                    "train_options.exec: sampling on the GPU reads the whole graph, which a rank "
                    "of a partitioned dataset does not hold");
    layout.sample_on_gpu = true;
    layout.graph = gpu_space_for(o.exec, graph_bytes(ds), graph_share_of_gpu);
    layout.features = gpu_space_for(o.exec, feature_bytes(ds), feature_share_of_gpu);
    layout.evaluation_reads_sampler_copies =
        model.device() != nullptr && model.device()->device() == o.exec.device()->device() &&
        layout.graph == memory_space::device && layout.features == memory_space::device;
  } else {
    layout.host_to_device = model.device() != nullptr;
    layout.features_between_gpus = layout.host_to_device && o.parallel != nullptr &&
                                   o.parallel->features != nullptr &&
                                   o.parallel->device_gradients != nullptr;
  }
  layout.evaluation = evaluation_for(ds, o);
  return layout;
}

}  // namespace bulkgnn::session
