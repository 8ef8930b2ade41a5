#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/executor_stage.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/loader/feature_cache.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "bulkgnn/session/session.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// A run that samples minibatches and reports them (bulkgnn sample), assembled
// for this rank: the graph placed where the executor's kernels read it, the
// bulk sampler, the features placed and gathered if asked, and the digests
// of the whole minibatches, merged over the ranks.
namespace bulkgnn::session {

// Where a run on a GPU keeps what its kernels read at random. Errors name
// these fields.
struct placement_options {
  // The graph: device memory, pinned host memory read through UVA, or auto
  // (device when it fits in half the GPU's memory).
  std::string topology = "auto";
  // The feature table: device, pinned, split (pinned, with the rows of the
  // hottest cache_fraction of the vertices cached on the device) or auto
  // (device when it fits in a quarter of the GPU's memory, else split).
  std::string features = "auto";
  double cache_fraction = 0.1;
  // Which vertices split caches: degree (highest first), or frequency (most
  // often input to a minibatch in a first pass over epoch 0).
  std::string cache_policy = "degree";
};

// What to sample. Errors name these fields.
struct sampling_plan {
  std::string split;  // whose training vertices are the seeds (empty: the first)
  sampler::sampler_options sampling;
  std::int64_t batch_size = 1024;
  std::int64_t bulk = 32;
  std::int64_t max_minibatches = 0;  // per epoch; 0: the whole epoch
  bool gather_features = false;      // gather each minibatch's input features too
  placement_options placement;
};

class sampling_run {
 public:
  // Collective where `cluster` is distributed. option_error naming the field
  // for what this run cannot do (a GPU under mpirun, a GPU or feature gather
  // over a partitioned dataset, placing features on the host).
  sampling_run(const run_data& data, run_session& cluster, const executor& exec,
               const sampling_plan& plan);

  // This rank's minibatches per epoch (as max_minibatches limits them).
  [[nodiscard]] std::int64_t minibatches_per_epoch() const { return per_epoch_; }

  // Shuffles `epoch`'s seeds; the bulks after it are of this epoch.
  void start_epoch(std::uint32_t epoch);

  struct sampled_bulk {
    sampler::bulk_sample bulk;  // this rank's parts, in host memory
    // {minibatch id, digest} of the whole minibatches this rank reports;
    // ids count from the first epoch's first minibatch.
    std::vector<std::pair<std::int64_t, std::uint64_t>> digests;
  };
  // Samples `count` minibatches from `first` of the epoch, and gathers their
  // input features if the plan asks (collective where distributed).
  [[nodiscard]] sampled_bulk sample(std::int64_t first, std::int64_t count);

  // Minibatch `j` of a bulk as a dataset's labels name it.
  [[nodiscard]] sampler::minibatch extract(const sampler::bulk_sample& bulk, std::int64_t j) const;

  // Seconds spent sampling: shuffles, and each bulk until the executor is done.
  [[nodiscard]] double sampling_seconds() const { return sampling_seconds_; }
  // Host seconds of the stages (shuffle, place_features, gather_features,
  // copy_to_host, digest) and the sampler's own (sampler/...); on a GPU also
  // the device's seconds of each (gpu/...).
  [[nodiscard]] stage_times times();

  // Where the graph is: nullopt where the run samples the dataset's own
  // mapping (host executors, a part); else the memory and bytes of the copy.
  struct placed_graph {
    memory_space space;
    double bytes;
  };
  [[nodiscard]] std::optional<placed_graph> graph_placement() const { return graph_placement_; }

  // With gather_features: the placement asked for or chosen (device, pinned,
  // split or host), the table, and what the gathers moved.
  [[nodiscard]] const std::string& feature_placement() const { return feature_placement_; }
  [[nodiscard]] const loader::placed_features* features() const {
    return features_ ? &*features_ : nullptr;
  }
  [[nodiscard]] const loader::gather_tally& gathered() const { return gathered_; }

 private:
  csr_view place_graph(const data::dataset& ds);
  void place_features(const data::dataset& ds);
  [[nodiscard]] std::vector<std::uint64_t> first_epoch_input_counts(vertex_t num_vertices);
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::uint64_t>> digests_of(
      const sampler::bulk_sample& bulk, std::int64_t first, std::int64_t count);

  const run_data& data_;
  run_session& cluster_;
  executor exec_;
  sampling_plan plan_;
  std::vector<vertex_t> seeds_;
  // How the sampler cuts epochs into subgraphs (null for samplers that
  // batch seeds).
  std::shared_ptr<const sampler::subgraph_batches> subgraphs_;
  std::int64_t per_epoch_ = 0;
  csr_matrix placed_graph_;
  std::optional<placed_graph> graph_placement_;
  std::optional<sampler::bulk_sampler> sampler_;
  std::string feature_placement_;
  std::optional<loader::placed_features> features_;
  loader::gather_tally gathered_;
  std::optional<sampler::epoch_plan> epoch_;
  std::uint32_t epoch_number_ = 0;
  double sampling_seconds_ = 0;
  stage_times times_;
  device_stage_log device_log_;
  stage_times device_times_;
};

}  // namespace bulkgnn::session
