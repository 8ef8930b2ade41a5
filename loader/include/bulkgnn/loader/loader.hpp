#pragma once

#include "bulkgnn/core/buffer_pool.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/loader/stage.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/link_seeds.hpp"
#include "bulkgnn/sampler/minibatch.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::loader {

// Fetches the feature rows of a minibatch's input vertices when they are not
// all in this process (partitioned over ranks, distributed/). A call is
// collective over the ranks that share the features: every rank calls it
// once per minibatch, in minibatch order.
class feature_fetcher {
 public:
  virtual ~feature_fetcher() = default;
  [[nodiscard]] virtual std::int64_t columns() const = 0;
  // out is vertices.size() × columns().
  virtual void fetch(std::span<const vertex_t> vertices, dense_view<float> out) = 0;
  // Whether fetches count toward what the fetcher learns from them and
  // reports (a cache chosen by access, hit counts); evaluation turns it off.
  virtual void count_fetches(bool on) { (void)on; }

  // Ranks that each own a GPU can move rows GPU to GPU instead (NCCL).
  // Starts doing so for fetch_placed(), into the memory of `exec`'s GPU, the
  // rows normalised by `normalizer` (nullptr: as stored); collective over the
  // ranks that share the features, which must all own a GPU. False where this
  // fetcher cannot (fetch() into host memory is then the only way).
  virtual bool place_on_device(const executor& exec, const row_normalizer* normalizer);
  // Where fetch_placed() writes once place_on_device() said yes, else nullptr.
  [[nodiscard]] virtual memory_resource* placed_memory() const { return nullptr; }
  // fetch() into placed_memory() (out lives there), normalised as
  // place_on_device() was told; the rows are complete when it returns.
  virtual void fetch_placed(std::span<const vertex_t> vertices, dense_view<float> out);
};

// What minibatches are drawn from. Features and labels are indexed by global
// vertex id; either may be empty (then minibatches carry none). `rows`, when
// set, is the sharded graph the sampler reads (its vertex count bounds the
// seeds) and `graph` may be empty; with `remote_features` set, features are fetched through it.
// With `normalizer` set, every gathered or fetched row is normalised by it.
struct graph_source {
  csr_view graph;
  dense_view<const float> features;
  std::span<const std::int32_t> labels;
  sampler::row_source* rows = nullptr;
  feature_fetcher* remote_features = nullptr;
  const row_normalizer* normalizer = nullptr;
};

struct loader_options {
  // Seeds per minibatch; where `subgraphs` is set, its unit (clusters,
  // or a GraphSAINT sampler's budget).
  std::int64_t batch_size = 1024;
  // How a sampler whose minibatches are subgraphs cuts every epoch
  // (sampler_entry::subgraph_batching); set for such a sampler only.
  std::shared_ptr<const sampler::subgraph_batches> subgraphs = nullptr;
  std::int64_t bulk = 32;         // minibatches sampled by one sampler call
  std::int64_t bulk_queue = 2;    // sampled bulks waiting for the gather stage
  std::int64_t ready_queue = 32;  // gathered minibatches waiting for the consumer
  // Bytes each queue after the sampler may hold at most (an empty queue
  // takes any one item): the sampled bulks', the gathered minibatches' with
  // their features, and with a host_to_device stage the copied minibatches';
  // 0: default_queue_bytes(), fixed when the loader is made.
  std::int64_t queue_bytes = 0;
  std::int64_t max_minibatches = 0;  // per epoch; 0 = the whole epoch
  // Data-parallel ranks: this loader hands out part `slice` of `slices`
  // (contiguous, nearly equal) of every minibatch's seeds, with exactly the
  // sample the whole minibatch has for them (see restrict_to_seeds).
  int slice = 0;
  int slices = 1;
  // Layer-wise samplers: the data-parallel ranks that sample each minibatch
  // together (sampler::minibatch_split::ranks), a context the sample stage's
  // thread uses alone; nullptr: each loader computes the whole distribution.
  comm::communicator* split_ranks = nullptr;
  // Called on the failing stage's thread before the pipeline stops; ranks
  // in collective calls cannot wait for the consumer to notice, so a
  // distributed run ends every rank from here.
  std::function<void(const std::string& message)> on_failure = {};
  // The slot between gather and the consumer where a device build puts the
  // stage that copies each ready_minibatch to the device (made once per
  // epoch; its output queue holds ready_queue items). Empty on the host.
  std::function<std::unique_ptr<stage>()> host_to_device = {};
  // Where the gather stage's feature buffers come from (nullptr: host
  // memory); pinned host memory lets a host_to_device stage copy them by
  // DMA. It must outlive the loader and the minibatches it hands out.
  memory_resource* feature_memory = nullptr;
};

// What a link loader's epochs pass over: its positive edges, each minibatch
// batch_size of them with negatives drawn as `negatives` says, and the
// edges each minibatch leaves out of its blocks.
struct link_task {
  sampler::edge_list positives;
  sampler::negative_sampling negatives;
  sampler::edge_exclusion exclude = sampler::edge_exclusion::reverse;
  bool shuffle = true;  // false: the positives in their order every epoch
};

// Seeds [begin, end) of part `slice` of `slices` of a minibatch of `seeds`.
using sampler::slice_range;

// Throws option_error naming the option (--batch-size, --bulk, ...).
void validate(const loader_options& options);

// The default byte bound of a queue: 1/64 of the memory available to the
// process, between 32 MiB and 128 MiB, so that a machine short of memory
// buffers less and large minibatches are buffered fewer at a time.
[[nodiscard]] std::int64_t default_queue_bytes();

// options.queue_bytes, or the default where it is 0.
[[nodiscard]] std::int64_t queue_bytes_of(const loader_options& options);

struct epoch_report {
  double seconds = 0;                // first request to the end of the epoch
  std::vector<stage_report> stages;  // shuffle, sample, gather, [host_to_device,] consume

  [[nodiscard]] const stage_report& slowest_stage() const;
  // Epoch time over the slowest stage's busy time: 1 means perfect overlap
  // (the epoch took no longer than its bottleneck), the stage count means none.
  [[nodiscard]] double overlap_ratio() const;
};

class epoch_stream;

// Where a trainer takes its minibatches from, one pass at a time: the
// loader below, or a device pipeline or a Python iterable behind the same
// calls.
class minibatch_source {
 public:
  virtual ~minibatch_source() = default;
  // Starts a pass over `seeds` as epoch `epoch` (which keys its shuffle and
  // draws), ending the pass before.
  virtual void start_epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) = 0;
  // The pass's next minibatch, or nullopt at its end.
  [[nodiscard]] virtual std::optional<ready_minibatch> next() = 0;
  // Of the current pass.
  [[nodiscard]] virtual std::int64_t num_minibatches() const = 0;
  [[nodiscard]] virtual epoch_report report() const = 0;
};

// The multistage producer–consumer pipeline that feeds a trainer:
//
//   shuffle → [requests] → sample (bulk) → [bulks] → gather → [ready]
//     (→ host_to_device → [ready]) → consumer
//
// Every stage is a `stage` object (stages.hpp, host_to_device.hpp) running on
// its own thread and hands work on through a bounded queue, so the stages
// overlap and the queue depths bound memory. Kernels
// inside a stage use the shared oneTBB worker pool. The minibatches and their
// order depend only on the sampler seed and epoch, never on queue depths,
// bulk size or thread count.
//
// Usable without the trainer:
//
//   sampler::bulk_sampler sampler(graph, sampler_options);
//   minibatch_loader loader(source, sampler, loader_options);
//   auto stream = loader.epoch(train_vertices, epoch);
//   while (auto mb = stream.next()) use(mb->batch, mb->input_features());
class minibatch_loader final : public minibatch_source {
 public:
  // `sampler` draws every minibatch (its seed keys the shuffle) and must
  // outlive the loader; it reads the graph through its own row source, so
  // it must sample the same graph as `source` describes.
  minibatch_loader(graph_source source, sampler::bulk_sampler& sampler, loader_options options,
                   executor exec = {});
  // A link loader: its minibatches carry link supervision
  // (ready_minibatch::link), their seeds the supervision's endpoints, and
  // its epochs pass over `task.positives` (what they view must outlive the
  // loader); start them with no seeds. Negatives are drawn over
  // source.graph, which must be whole in host memory; one slice only.
  minibatch_loader(graph_source source, sampler::bulk_sampler& sampler, link_task task,
                   loader_options options, executor exec = {});
  ~minibatch_loader() override;
  minibatch_loader(const minibatch_loader&) = delete;
  minibatch_loader& operator=(const minibatch_loader&) = delete;

  // Starts one pass over `seeds` (a link loader: over its positives, `seeds`
  // empty), shuffled by (sampler seed, epoch). At most
  // one stream may be alive per loader, and the loader must outlive it (the
  // stages use its buffers), hence no streams from temporary loaders.
  [[nodiscard]] epoch_stream epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) &;
  epoch_stream epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) && = delete;

  // The minibatch_source calls, over a stream the loader keeps.
  void start_epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) override;
  [[nodiscard]] std::optional<ready_minibatch> next() override;
  [[nodiscard]] std::int64_t num_minibatches() const override;
  [[nodiscard]] epoch_report report() const override;

  [[nodiscard]] const loader_options& options() const { return options_; }
  [[nodiscard]] const sampler::bulk_sampler& sampler() const { return sampler_; }

 private:
  [[nodiscard]] sampler::link_options link_options_of(const link_task& task) const;

  graph_source source_;
  loader_options options_;
  executor exec_;
  sampler::bulk_sampler& sampler_;
  buffer_pool<float> feature_buffers_;
  std::optional<link_task> link_;
  std::optional<sampler::negative_sampler> negatives_;
  bool stream_alive_ = false;
  std::unique_ptr<epoch_stream> current_;  // last: it stops before the rest goes
  friend class epoch_stream;
};

// One epoch of ready minibatches, in minibatch order. Destroying the stream
// early stops the stages. A failure in any stage is rethrown by next().
class epoch_stream {
 public:
  ~epoch_stream();
  epoch_stream(epoch_stream&&) noexcept;
  epoch_stream& operator=(epoch_stream&&) = delete;
  epoch_stream(const epoch_stream&) = delete;
  epoch_stream& operator=(const epoch_stream&) = delete;

  // The next minibatch, or nullopt once the epoch is exhausted (and on every
  // later call). Blocks while the pipeline has nothing ready.
  [[nodiscard]] std::optional<ready_minibatch> next();
  [[nodiscard]] std::int64_t num_minibatches() const;
  // Per-stage times so far; complete once next() has returned nullopt.
  [[nodiscard]] epoch_report report() const;

 private:
  struct pipeline;
  explicit epoch_stream(std::unique_ptr<pipeline> p);
  std::unique_ptr<pipeline> pipeline_;
  friend class minibatch_loader;
};

}  // namespace bulkgnn::loader
