#include "bulkgnn/loader/loader.hpp"

#include "bounded_queue.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

namespace bulkgnn::loader {

void validate(const loader_options& o) {
  BULKGNN_EXPECTS(o.batch_size > 0, "--batch-size must be positive, got {}", o.batch_size);
  BULKGNN_EXPECTS(o.bulk > 0, "--bulk must be positive, got {}", o.bulk);
  BULKGNN_EXPECTS(o.bulk_queue > 0, "--bulk-queue must be positive, got {}", o.bulk_queue);
  BULKGNN_EXPECTS(o.ready_queue > 0, "--ready-queue must be positive, got {}", o.ready_queue);
  BULKGNN_EXPECTS(o.max_minibatches >= 0,
                  "--max-minibatches must be 0 (no limit) or positive, got {}", o.max_minibatches);
  BULKGNN_EXPECTS(o.slices >= 1 && o.slice >= 0 && o.slice < o.slices,
                  "loader: slice {} of {} does not exist", o.slice, o.slices);
}

namespace {

// In steady state the consumer drops a minibatch as the gather stage takes a
// buffer for the next, so a few kept buffers serve the whole epoch; keeping
// more would only hold on to a drained queue's worth of memory between epochs.
constexpr std::size_t kept_feature_buffers = 4;

std::size_t input_entries(const ready_minibatch& mb) {
  return mb.batch.input_nodes.size() * static_cast<std::size_t>(mb.feature_columns);
}

}  // namespace

std::pair<std::int64_t, std::int64_t> slice_range(std::int64_t seeds, int slice, int slices) {
  return {seeds * slice / slices, seeds * (slice + 1) / slices};
}

const stage_report& epoch_report::slowest_stage() const {
  BULKGNN_ASSERT(!stages.empty());
  return *std::max_element(stages.begin(), stages.end(), [](const auto& a, const auto& b) {
    return a.busy_seconds < b.busy_seconds;
  });
}

double epoch_report::overlap_ratio() const {
  const double slowest = slowest_stage().busy_seconds;
  return slowest > 0 ? seconds / slowest : 1.0;
}

namespace {

struct bulk_request {
  std::shared_ptr<const sampler::epoch_plan> plan;
  std::int64_t first = 0;
  std::int64_t count = 0;
};

std::string describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

enum stage_index { shuffle_stage, sample_stage, gather_stage, consume_stage, stage_count };

}  // namespace

struct epoch_stream::pipeline {
  pipeline(minibatch_loader& owner, std::span<const vertex_t> seeds, std::uint32_t epoch)
      : loader(owner),
        seeds(seeds.begin(), seeds.end()),
        epoch(epoch),
        requests(static_cast<std::size_t>(owner.options_.bulk_queue)),
        bulks(static_cast<std::size_t>(owner.options_.bulk_queue)),
        ready(static_cast<std::size_t>(owner.options_.ready_queue)) {
    const auto& o = owner.options_;
    count = seeds.empty()
                ? 0
                : sampler::minibatch_count(static_cast<std::int64_t>(seeds.size()), o.batch_size);
    if (o.max_minibatches > 0) count = std::min(count, o.max_minibatches);
    const char* names[stage_count] = {"shuffle", "sample", "gather", "consume"};
    for (int s = 0; s < stage_count; ++s) reports[s].name = names[s];
  }

  ~pipeline() { stop(); }

  void start() {
    threads.emplace_back([this] { run_stage([this] { shuffle(); }); });
    threads.emplace_back([this] { run_stage([this] { sample(); }); });
    threads.emplace_back([this] { run_stage([this] { gather(); }); });
  }

  void stop() {
    cancel_all();
    for (auto& t : threads)
      if (t.joinable()) t.join();
    threads.clear();
  }

  void cancel_all() {
    requests.cancel();
    bulks.cancel();
    ready.cancel();
  }

  // Runs one stage's loop; its first failure stops every stage and is
  // rethrown to the consumer.
  template <class Body>
  void run_stage(Body&& body) {
    try {
      body();
    } catch (...) {
      if (loader.options_.on_failure)
        loader.options_.on_failure(describe(std::current_exception()));
      {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
      cancel_all();
    }
  }

  void add_busy(int stage, double seconds, std::int64_t items = 1) {
    const std::lock_guard lock(mutex);
    reports[stage].busy_seconds += seconds;
    reports[stage].items += items;
  }

  // Queue operations that charge their waiting time to a stage.
  template <class T>
  std::optional<T> pop(detail::bounded_queue<T>& queue, int stage) {
    double waited = 0;
    auto item = queue.pop(waited);
    const std::lock_guard lock(mutex);
    reports[stage].input_wait_seconds += waited;
    return item;
  }

  template <class T>
  bool push(detail::bounded_queue<T>& queue, T item, int stage) {
    double waited = 0;
    const bool pushed = queue.push(std::move(item), waited);
    const std::lock_guard lock(mutex);
    reports[stage].output_wait_seconds += waited;
    return pushed;
  }

  void shuffle() {
    const auto& o = loader.options_;
    const stopwatch busy;
    auto plan = std::make_shared<const sampler::epoch_plan>(seeds, o.batch_size,
                                                            loader.sampler_.options().seed, epoch);
    add_busy(shuffle_stage, busy.seconds());
    for (std::int64_t first = 0; first < count; first += o.bulk) {
      if (!push(requests, bulk_request{plan, first, std::min(o.bulk, count - first)},
                shuffle_stage))
        return;
    }
    requests.close();
  }

  // Whole minibatches, or this loader's slices of them: node-wise samples
  // of a slice are exactly its part of the whole sample; layer-wise ones
  // depend on every seed, so those are sampled whole and cut at gather.
  sampler::bulk_sample sample_bulk(const bulk_request& request) {
    const auto& o = loader.options_;
    if (o.slices == 1 || loader.sampler_.options().kind != sampler::sampler_kind::node_wise)
      return loader.sampler_.sample(*request.plan, request.first, request.count);
    segmented_vertices seeds;
    std::vector<std::int64_t> ids;
    for (std::int64_t j = request.first; j < request.first + request.count; ++j) {
      const auto all = request.plan->seeds(j);
      const auto [begin, end] =
          slice_range(static_cast<std::int64_t>(all.size()), o.slice, o.slices);
      seeds.push_segment(all.subspan(begin, end - begin));
      ids.push_back(j);
    }
    return loader.sampler_.sample(request.plan->epoch(), std::move(seeds), ids);
  }

  void sample() {
    while (auto request = pop(requests, sample_stage)) {
      const stopwatch busy;
      auto bulk = std::make_shared<sampler::bulk_sample>(sample_bulk(*request));
      add_busy(sample_stage, busy.seconds());
      if (!push(bulks, std::move(bulk), sample_stage)) return;
    }
    bulks.close();
  }

  void gather() {
    const auto& source = loader.source_;
    const bool cut_at_gather = loader.options_.slices > 1 &&
                               loader.sampler_.options().kind != sampler::sampler_kind::node_wise;
    while (auto bulk = pop(bulks, gather_stage)) {
      for (std::int64_t j = 0; j < (*bulk)->count(); ++j) {
        const stopwatch busy;
        ready_minibatch mb;
        mb.batch = (*bulk)->extract(j, source.labels);
        if (cut_at_gather) {
          const auto [begin, end] = slice_range(static_cast<std::int64_t>(mb.batch.seeds.size()),
                                                loader.options_.slice, loader.options_.slices);
          mb.batch = sampler::restrict_to_seeds(mb.batch, begin, end);
        }
        if (source.remote_features != nullptr) {
          mb.feature_columns = source.remote_features->columns();
          mb.features = loader.feature_buffers_.take(input_entries(mb));
          source.remote_features->fetch(mb.batch.input_nodes,
                                        {static_cast<std::int64_t>(mb.batch.input_nodes.size()),
                                         mb.feature_columns, mb.features.span()});
        } else if (!source.features.empty()) {
          mb.feature_columns = source.features.cols;
          mb.features = loader.feature_buffers_.take(input_entries(mb));
          kernels::gather_dense_rows(loader.exec_, source.features, mb.batch.input_nodes,
                                     {static_cast<std::int64_t>(mb.batch.input_nodes.size()),
                                      mb.feature_columns, mb.features.span()});
        }
        if (source.normalizer != nullptr && mb.feature_columns > 0)
          source.normalizer->apply(mb.batch.input_nodes,
                                   {static_cast<std::int64_t>(mb.batch.input_nodes.size()),
                                    mb.feature_columns, mb.features.span()});
        add_busy(gather_stage, busy.seconds());
        if (!push(ready, std::move(mb), gather_stage)) return;
      }
    }
    ready.close();
  }

  std::optional<ready_minibatch> next() {
    if (finished) {
      if (failure) std::rethrow_exception(failure);
      return std::nullopt;
    }
    if (handed_out > 0) add_busy(consume_stage, since_handout.seconds(), 0);
    auto mb = pop(ready, consume_stage);
    if (mb) {
      ++handed_out;
      add_busy(consume_stage, 0);
    } else {
      finish();
    }
    since_handout.restart();
    return mb;
  }

  void finish() {
    stop();
    if (!finished) {
      finished = true;
      epoch_seconds = clock.seconds();
    }
    if (failure) std::rethrow_exception(failure);
    BULKGNN_ASSERT(handed_out == count);
  }

  minibatch_loader& loader;
  std::vector<vertex_t> seeds;
  std::uint32_t epoch;
  std::int64_t count = 0;
  detail::bounded_queue<bulk_request> requests;
  detail::bounded_queue<std::shared_ptr<sampler::bulk_sample>> bulks;
  detail::bounded_queue<ready_minibatch> ready;

  std::mutex mutex;  // guards reports' busy/items and failure
  stage_report reports[stage_count];
  std::exception_ptr failure;
  std::vector<std::thread> threads;

  stopwatch clock;
  stopwatch since_handout;
  std::int64_t handed_out = 0;
  bool finished = false;
  double epoch_seconds = 0;
};

minibatch_loader::minibatch_loader(graph_source source, sampler::sampler_options sampling,
                                   loader_options options, executor exec)
    : source_(source),
      options_(options),
      exec_(exec),
      own_rows_(source.rows ? nullptr : std::make_unique<sampler::local_rows>(source.graph)),
      sampler_(source.rows ? *source.rows : *own_rows_, std::move(sampling), exec),
      feature_buffers_(kept_feature_buffers) {
  validate(options_);
  const std::int64_t n = source.rows ? source.rows->num_vertices() : source.graph.rows;
  BULKGNN_EXPECTS(source.features.empty() || source.features.rows == n,
                  "loader: features have {} rows but the graph has {} vertices",
                  source.features.rows, n);
  BULKGNN_EXPECTS(source.labels.empty() || static_cast<std::int64_t>(source.labels.size()) == n,
                  "loader: {} labels for {} vertices", source.labels.size(), n);
  BULKGNN_EXPECTS(source.normalizer == nullptr ||
                      static_cast<std::int64_t>(source.normalizer->divisors().size()) == n,
                  "loader: the feature normalizer has {} rows for {} vertices",
                  source.normalizer->divisors().size(), n);
}

minibatch_loader::~minibatch_loader() = default;

epoch_stream minibatch_loader::epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) & {
  BULKGNN_EXPECTS(!stream_alive_, "minibatch_loader: finish or destroy the previous epoch first");
  const std::int64_t n = source_.rows ? source_.rows->num_vertices() : source_.graph.rows;
  for (const vertex_t v : seeds)
    BULKGNN_EXPECTS(v >= 0 && v < n, "loader: seed vertex {} is not in [0, {})", v, n);
  auto p = std::make_unique<epoch_stream::pipeline>(*this, seeds, epoch);
  p->start();
  stream_alive_ = true;
  return epoch_stream(std::move(p));
}

epoch_stream::epoch_stream(std::unique_ptr<pipeline> p) : pipeline_(std::move(p)) {}

epoch_stream::epoch_stream(epoch_stream&&) noexcept = default;

epoch_stream::~epoch_stream() {
  if (!pipeline_) return;
  pipeline_->stop();
  pipeline_->loader.stream_alive_ = false;
}

namespace {

void check_not_moved_from(const void* pipeline) {
  BULKGNN_EXPECTS(pipeline != nullptr, "epoch_stream: used after being moved from");
}

}  // namespace

std::optional<ready_minibatch> epoch_stream::next() {
  check_not_moved_from(pipeline_.get());
  return pipeline_->next();
}

std::int64_t epoch_stream::num_minibatches() const {
  check_not_moved_from(pipeline_.get());
  return pipeline_->count;
}

epoch_report epoch_stream::report() const {
  check_not_moved_from(pipeline_.get());
  const std::lock_guard lock(pipeline_->mutex);
  epoch_report r;
  r.seconds = pipeline_->finished ? pipeline_->epoch_seconds : pipeline_->clock.seconds();
  r.stages.assign(std::begin(pipeline_->reports), std::end(pipeline_->reports));
  return r;
}

}  // namespace bulkgnn::loader
