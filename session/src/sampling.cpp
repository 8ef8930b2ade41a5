#include "bulkgnn/session/sampling.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/session/layout.hpp"
#include "subgraph_batching.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

namespace bulkgnn::session {

namespace {

void require_placement_names(const placement_options& p) {
  const auto one_of = [](const std::string& value, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), value) != names.end();
  };
  BULKGNN_EXPECTS(one_of(p.topology, {"auto", "device", "pinned"}),
                  "placement_options.topology must be auto, device or pinned; got '{}'",
                  p.topology);
  BULKGNN_EXPECTS(one_of(p.features, {"auto", "device", "pinned", "split"}),
                  "placement_options.features must be auto, device, pinned or split; got '{}'",
                  p.features);
  BULKGNN_EXPECTS(p.cache_fraction >= 0 && p.cache_fraction <= 1,
                  "placement_options.cache_fraction must be in [0, 1]; got {}", p.cache_fraction);
}

}  // namespace

sampling_run::sampling_run(const run_data& data, run_session& cluster, const executor& exec,
                           const sampling_plan& plan)
    : data_(data), cluster_(cluster), exec_(exec), plan_(plan) {
  require_placement_names(plan.placement);
  const bool on_gpu = exec.device() != nullptr;
  BULKGNN_EXPECTS(!data.part || (!on_gpu && !plan.gather_features),
                  "execution_options.device cuda and sampling_plan.gather_features read a whole "
                  "dataset; {} is partitioned",
                  data.part ? data.part->name() : std::string());
  BULKGNN_EXPECTS(!on_gpu || !cluster.distributed(),
                  "execution_options.device cuda: sampling on the GPU under mpirun is not "
                  "supported yet");
  BULKGNN_EXPECTS(!plan.gather_features || !cluster.distributed(),
                  "sampling_plan.gather_features: gathering features under mpirun is not "
                  "supported yet");
  BULKGNN_EXPECTS(!plan.gather_features || on_gpu || plan.placement.features == "auto",
                  "placement_options.features {}: placing features applies to "
                  "execution_options.device cuda only",
                  plan.placement.features);
  seeds_ = data.part ? data.part->training_vertices(plan.split)
                     : data.whole->training_vertices(plan.split);
  subgraphs_ =
      data.part
          ? detail::subgraphs_for({}, data.part->num_nodes(), plan.sampling, plan.batch_size, exec)
          : detail::subgraphs_for(data.whole->graph(), data.whole->num_nodes(), plan.sampling,
                                  plan.batch_size, exec);
  per_epoch_ = sampler::minibatch_count(seeds_, plan.batch_size, subgraphs_.get());
  if (plan.max_minibatches > 0) per_epoch_ = std::min(per_epoch_, plan.max_minibatches);
  // Alone, a partitioned dataset has one part: the whole graph.
  if (cluster.rows() != nullptr)
    sampler_.emplace(*cluster.rows(), plan.sampling, exec);
  else
    sampler_.emplace(data.part ? data.part->rows() : place_graph(*data.whole), plan.sampling, exec);
  if (plan.gather_features) {
    scoped_stage stage(times_, "place_features");
    place_features(*data.whole);
  }
}

csr_view sampling_run::place_graph(const data::dataset& ds) {
  const csr_view graph = ds.graph();
  // The kernels trust device-resident weights: every dataset's were checked
  // positive and finite when it opened (data::dataset::validate).
  if (exec_.device() == nullptr) return graph;
  const auto bytes = static_cast<double>(graph.indptr.size_bytes() + graph.indices.size_bytes() +
                                         graph.values.size_bytes());
  const auto& topology = plan_.placement.topology;
  const bool on_device = topology == "device" ||
                         (topology == "auto" &&
                          gpu_space_for(exec_, bytes, graph_share_of_gpu) == memory_space::device);
  placed_graph_ = copy_to(graph, on_device ? exec_.memory() : exec_.device()->pinned_memory());
  graph_placement_ = placed_graph{placed_graph_.space(), bytes};
  return placed_graph_.view();
}

void sampling_run::place_features(const data::dataset& ds) {
  const auto features = ds.features();
  const auto& p = plan_.placement;
  const auto policy = loader::parse_cache_policy(p.cache_policy, "placement_options.cache_policy");
  if (exec_.device() == nullptr) {
    feature_placement_ = "host";
    features_.emplace(features, host_memory(), std::span<const vertex_t>{}, host_memory());
    return;
  }
  feature_placement_ = p.features;
  if (feature_placement_ == "auto")
    feature_placement_ = gpu_space_for(exec_, static_cast<double>(features.data.size_bytes()),
                                       feature_share_of_gpu) == memory_space::device
                             ? "device"
                             : "split";
  auto& device = exec_.memory();
  auto& table = feature_placement_ == "device" ? device : exec_.device()->pinned_memory();
  std::vector<vertex_t> hot;
  if (feature_placement_ == "split") {
    const auto cached = static_cast<std::int64_t>(
        std::llround(p.cache_fraction * static_cast<double>(features.rows)));
    if (cached > 0)
      hot = policy == loader::cache_policy::degree
                ? loader::hottest_by_degree(ds.graph(), cached)
                : loader::hottest_by_count(first_epoch_input_counts(ds.num_nodes()), cached);
  }
  features_.emplace(features, table, hot, device);
}

std::vector<std::uint64_t> sampling_run::first_epoch_input_counts(vertex_t num_vertices) {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(num_vertices), 0);
  const sampler::epoch_plan plan(seeds_, plan_.batch_size, plan_.sampling.seed, 0, subgraphs_);
  for (std::int64_t first = 0; first < per_epoch_; first += plan_.bulk) {
    const auto bulk = sampler::copy_to_host(
        sampler_->sample(plan, first, std::min(plan_.bulk, per_epoch_ - first)));
    for (const vertex_t v : bulk.layers.back().sources.vertices) ++counts[v];
  }
  return counts;
}

void sampling_run::start_epoch(std::uint32_t epoch) {
  const stopwatch shuffle;
  epoch_.emplace(seeds_, plan_.batch_size, plan_.sampling.seed, epoch, subgraphs_);
  epoch_number_ = epoch;
  const double seconds = shuffle.seconds();
  times_.add("shuffle", seconds);
  sampling_seconds_ += seconds;
}

sampling_run::sampled_bulk sampling_run::sample(std::int64_t first, std::int64_t count) {
  BULKGNN_EXPECTS(epoch_.has_value(), "sampling_run::sample: no epoch started");
  // Every rank takes part in every minibatch, as data-parallel training
  // does: each samples its part of each (bulk_sampler::sample_slices).
  const stopwatch sampling;
  auto bulk = sampler_->sample_slices(*epoch_, first, count, cluster_.minibatch_split());
  exec_.synchronize();
  sampling_seconds_ += sampling.seconds();
  if (features_) {
    executor_stage stage(exec_, times_, device_log_, "gather_features");
    const auto inputs = std::span<const vertex_t>(bulk.layers.back().sources.vertices);
    const auto cols = data_.whole->features().cols;
    buffer<float> rows(inputs.size() * static_cast<std::size_t>(cols), exec_.memory());
    gathered_.gather(
        exec_, *features_, inputs,
        {static_cast<std::int64_t>(inputs.size()), cols, std::span<float>(rows), rows.space()});
    exec_.synchronize();
  }
  if (exec_.device() != nullptr) {
    scoped_stage stage(times_, "copy_to_host");
    bulk = sampler::copy_to_host(bulk);
    device_log_.collect(exec_, device_times_);
    (void)sampler_->device_times();  // collected each bulk, so the log stays short
  }
  scoped_stage stage(times_, "digest");
  auto digests = digests_of(bulk, first, count);
  return {std::move(bulk), std::move(digests)};
}

std::vector<std::pair<std::int64_t, std::uint64_t>> sampling_run::digests_of(
    const sampler::bulk_sample& bulk, std::int64_t first, std::int64_t count) {
  const std::int64_t epoch_start = static_cast<std::int64_t>(epoch_number_) * per_epoch_;
  std::vector<std::pair<std::int64_t, std::uint64_t>> digests;
  if (!cluster_.distributed()) {
    std::vector<std::uint64_t> whole(static_cast<std::size_t>(count));
    tbb::parallel_for(std::int64_t{0}, count, [&](std::int64_t j) { whole[j] = bulk.digest(j); });
    for (std::int64_t j = 0; j < count; ++j)
      digests.emplace_back(epoch_start + first + j, whole[j]);
    return digests;
  }
  // Parts share destinations: the digests of the whole minibatches are
  // merged by minibatch owner over the ranks, so they equal a single
  // process's for any rank count.
  std::vector<std::vector<sampler::destination_edges>> parts(static_cast<std::size_t>(count));
  tbb::parallel_for(std::int64_t{0}, count,
                    [&](std::int64_t j) { parts[j] = bulk.destinations(j); });
  std::vector<sampler::destination_edges> mine;
  for (const auto& part : parts) mine.insert(mine.end(), part.begin(), part.end());
  const auto hops = sampler::block_count(plan_.sampling);
  for (const auto& [id, d] : cluster_.merge_part_digests(*epoch_, hops, mine))
    digests.emplace_back(epoch_start + id, d);
  return digests;
}

sampler::minibatch sampling_run::extract(const sampler::bulk_sample& bulk, std::int64_t j) const {
  return bulk.extract(j, data_.part ? data_.part->labels() : data_.whole->labels());
}

stage_times sampling_run::times() {
  stage_times all = times_;
  for (const auto& [stage, seconds] : sampler_->times().all()) all.add("sampler/" + stage, seconds);
  for (const auto& [stage, seconds] : sampler_->device_times().all())
    all.add("gpu/sampler/" + stage, seconds);
  for (const auto& [stage, seconds] : device_times_.all()) all.add("gpu/" + stage, seconds);
  return all;
}

}  // namespace bulkgnn::session
