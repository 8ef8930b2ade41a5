#include "bulkgnn/loader/loader.hpp"

#include "bulkgnn/loader/stages.hpp"

#include "bounded_queue.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/timer.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

namespace bulkgnn::loader {

void validate(const loader_options& o) {
  BULKGNN_EXPECTS(o.batch_size > 0, "loader_options.batch_size must be positive, got {}",
                  o.batch_size);
  BULKGNN_EXPECTS(o.bulk > 0, "loader_options.bulk must be positive, got {}", o.bulk);
  BULKGNN_EXPECTS(o.bulk_queue > 0, "loader_options.bulk_queue must be positive, got {}",
                  o.bulk_queue);
  BULKGNN_EXPECTS(o.ready_queue > 0, "loader_options.ready_queue must be positive, got {}",
                  o.ready_queue);
  BULKGNN_EXPECTS(o.queue_bytes >= 0, "loader_options.queue_bytes must not be negative, got {}",
                  o.queue_bytes);
  BULKGNN_EXPECTS(o.max_minibatches >= 0,
                  "loader_options.max_minibatches must be 0 (no limit) or positive, got {}",
                  o.max_minibatches);
  BULKGNN_EXPECTS(o.slices >= 1 && o.slice >= 0 && o.slice < o.slices,
                  "loader: slice {} of {} does not exist", o.slice, o.slices);
}

std::int64_t default_queue_bytes() {
  constexpr double mib = 1024.0 * 1024.0;
  return static_cast<std::int64_t>(std::clamp(available_memory_bytes() / 64, 32 * mib, 128 * mib));
}

std::int64_t queue_bytes_of(const loader_options& options) {
  return options.queue_bytes > 0 ? options.queue_bytes : default_queue_bytes();
}

bool feature_fetcher::place_on_device(const executor&, const row_normalizer*) { return false; }

void feature_fetcher::fetch_placed(std::span<const vertex_t>, dense_view<float>) {
  throw error("feature_fetcher: fetch_placed needs rows placed on a device (place_on_device)");
}

namespace {

// In steady state the consumer drops a minibatch as the gather stage takes a
// buffer for the next, so a few kept buffers serve the whole epoch; keeping
// more would only hold on to a drained queue's worth of memory between epochs.
constexpr std::size_t kept_feature_buffers = 4;

}  // namespace

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

std::string describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// A stage with the capacity of the queue it feeds, in items and in bytes (0:
// unbounded).
struct placed_stage {
  std::unique_ptr<stage> step;
  std::size_t output_capacity = 0;
  std::size_t output_bytes = 0;
};

// What an item's buffers hold: the sampled and gathered data a queue's byte
// bound counts (requests and the epoch's start count nothing).
std::size_t item_bytes(const stage_item& item) {
  if (const auto* bulk = std::get_if<std::shared_ptr<sampler::bulk_sample>>(&item))
    return (*bulk)->size_bytes();
  if (const auto* mb = std::get_if<ready_minibatch>(&item)) return mb->size_bytes();
  if (const auto* links = std::get_if<std::shared_ptr<sampler::link_bulk>>(&item))
    return (*links)->size_bytes();
  return 0;
}

}  // namespace

// Runs a list of stages, each on its own thread, joined by bounded queues;
// the last queue feeds next(). queues[s] is stage s's input, queues[s + 1]
// its output; reports[s] is stage s's, the last one the consumer's.
struct epoch_stream::pipeline {
  using queue = detail::bounded_queue<stage_item>;

  pipeline(minibatch_loader& owner, std::vector<placed_stage> placed,
           std::span<const vertex_t> epoch_seeds, std::uint32_t epoch, std::int64_t minibatches)
      : loader(owner),
        seeds(epoch_seeds.begin(), epoch_seeds.end()),
        count(minibatches),
        reports(placed.size() + 1) {
    queues.push_back(std::make_unique<queue>(1));
    for (auto& p : placed) {
      reports[stages.size()].name = p.step->name();
      stages.push_back(std::move(p.step));
      queues.push_back(std::make_unique<queue>(p.output_capacity, p.output_bytes, item_bytes));
    }
    reports.back().name = "consume";
    double never_waits = 0;
    queues.front()->push(epoch_start{seeds, epoch, count}, never_waits);
    queues.front()->close();
  }

  ~pipeline() { stop(); }

  void start() {
    for (std::size_t s = 0; s < stages.size(); ++s)
      threads.emplace_back([this, s] { run_stage(s); });
  }

  void stop() {
    cancel_all();
    for (auto& t : threads)
      if (t.joinable()) t.join();
    threads.clear();
  }

  void cancel_all() {
    for (auto& q : queues) q->cancel();
  }

  // The context stage s sees: emits go to its output queue.
  class context final : public stage_context {
   public:
    context(pipeline& p, std::size_t s) : p_(p), s_(s) {}
    bool emit(stage_item item) override { return p_.push(*p_.queues[s_ + 1], std::move(item), s_); }
    void add_busy(double seconds, std::int64_t items) override { p_.add_busy(s_, seconds, items); }

   private:
    pipeline& p_;
    std::size_t s_;
  };

  // Feeds stage s its input; its first failure stops every stage and is
  // rethrown to the consumer.
  void run_stage(std::size_t s) {
    try {
      context ctx(*this, s);
      while (auto item = pop(*queues[s], s))
        if (!stages[s]->process(std::move(*item), ctx)) return;
      queues[s + 1]->close();
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

  void add_busy(std::size_t stage, double seconds, std::int64_t items = 1) {
    const std::lock_guard lock(mutex);
    reports[stage].busy_seconds += seconds;
    reports[stage].items += items;
  }

  // Queue operations that charge their waiting time to a stage.
  std::optional<stage_item> pop(queue& q, std::size_t stage) {
    double waited = 0;
    auto item = q.pop(waited);
    const std::lock_guard lock(mutex);
    reports[stage].input_wait_seconds += waited;
    return item;
  }

  bool push(queue& q, stage_item item, std::size_t stage) {
    double waited = 0;
    const bool pushed = q.push(std::move(item), waited);
    const std::lock_guard lock(mutex);
    reports[stage].output_wait_seconds += waited;
    return pushed;
  }

  std::optional<ready_minibatch> next() {
    if (finished) {
      if (failure) std::rethrow_exception(failure);
      return std::nullopt;
    }
    const std::size_t consumer = stages.size();
    if (handed_out > 0) add_busy(consumer, since_handout.seconds(), 0);
    auto item = pop(*queues.back(), consumer);
    std::optional<ready_minibatch> mb;
    if (item) {
      mb = std::get<ready_minibatch>(std::move(*item));
      ++handed_out;
      add_busy(consumer, 0);
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
  std::vector<vertex_t> seeds;  // the caller's may go before the shuffle stage reads them
  std::int64_t count = 0;
  std::vector<std::unique_ptr<stage>> stages;
  std::vector<std::unique_ptr<queue>> queues;

  std::mutex mutex;  // guards reports' busy/items and failure
  std::vector<stage_report> reports;
  std::exception_ptr failure;
  std::vector<std::thread> threads;

  stopwatch clock;
  stopwatch since_handout;
  std::int64_t handed_out = 0;
  bool finished = false;
  double epoch_seconds = 0;
};

minibatch_loader::minibatch_loader(graph_source source, sampler::bulk_sampler& sampler,
                                   loader_options options, executor exec)
    : source_(source),
      options_(options),
      exec_(exec),
      sampler_(sampler),
      feature_buffers_(kept_feature_buffers, options.feature_memory != nullptr
                                                 ? *options.feature_memory
                                                 : host_memory()) {
  validate(options_);
  // Resolved once, so that every epoch (and what a front end reports) uses one bound.
  options_.queue_bytes = queue_bytes_of(options_);
  const std::int64_t n = source.rows ? source.rows->num_vertices() : source.graph.rows;
  BULKGNN_EXPECTS(source.features.empty() || source.features.rows == n,
                  "loader: features have {} rows but the graph has {} vertices",
                  source.features.rows, n);
  BULKGNN_EXPECTS(source.labels.empty() || static_cast<std::int64_t>(source.labels.size()) == n,
                  "loader: {} labels for {} vertices", source.labels.size(), n);
  const bool batches_subgraphs = sampler::find_sampler(sampler.options().kind).batches_subgraphs();
  BULKGNN_EXPECTS(!batches_subgraphs || options_.subgraphs,
                  "sampler_options.kind: the {} sampler's minibatches are subgraphs of the graph "
                  "(clusters or drawn subgraphs), and this loader was given no batching of them "
                  "(link minibatches are batches of edges: use a sampler that grows from seeds)",
                  sampler.options().kind);
  BULKGNN_EXPECTS(batches_subgraphs || !options_.subgraphs,
                  "loader_options.subgraphs: only a sampler whose minibatches are subgraphs "
                  "(cluster-gcn, saint-*) runs on them, not {}",
                  sampler.options().kind);
  BULKGNN_EXPECTS(!options_.subgraphs || options_.subgraphs->num_vertices() == n,
                  "loader_options.subgraphs: a batching of {} vertices for a graph of {}",
                  options_.subgraphs ? options_.subgraphs->num_vertices() : 0, n);
  BULKGNN_EXPECTS(source.normalizer == nullptr ||
                      static_cast<std::int64_t>(source.normalizer->divisors().size()) == n,
                  "loader: the feature normalizer has {} rows for {} vertices",
                  source.normalizer->divisors().size(), n);
  // On a device the gather reads the features where the executor reaches
  // them; normalising and fetching rows from other ranks are host steps.
  BULKGNN_EXPECTS(host_accessible(exec.memory().space()) ||
                      (source.normalizer == nullptr && source.remote_features == nullptr &&
                       !source.features.empty() && exec.can_access(source.features.space)),
                  "loader: gathering on a {} executor needs every feature row in memory it "
                  "reaches (device or pinned host; here {}), already normalised, and no rows "
                  "fetched from other ranks",
                  backend_name(exec.kind()), memory_space_name(source.features.space));
}

minibatch_loader::minibatch_loader(graph_source source, sampler::bulk_sampler& sampler,
                                   link_task task, loader_options options, executor exec)
    : minibatch_loader(source, sampler, options, exec) {
  BULKGNN_EXPECTS(
      source.rows == nullptr && source.graph.rows > 0 && host_accessible(source.graph.space),
      "loader: link minibatches draw their negatives over the whole graph, which "
      "must be in this process's host memory");
  BULKGNN_EXPECTS(!options_.subgraphs,
                  "sampler_options.kind: link minibatches are batches of edges; the {} sampler's "
                  "are subgraphs",
                  sampler.options().kind);
  sampler::validate(link_options_of(task));
  sampler::validate(task.positives, source.graph.rows);
  BULKGNN_EXPECTS(
      task.exclude == sampler::edge_exclusion::none || sampler.leaves_out_edges(),
      "sampler_options.kind: the {} sampler cannot leave a link minibatch's own "
      "edges out of its blocks yet; use a node-wise or layer-wise sampler (sage, labor, "
      "random-walk, ladies, fastgcn), or link_options.exclude none to let the model read the "
      "edges it predicts",
      sampler.options().kind);
  BULKGNN_EXPECTS(
      task.exclude == sampler::edge_exclusion::none || host_accessible(exec_.memory().space()),
      "loader: leaving a link minibatch's edges out of its blocks runs on the host "
      "back ends only so far");
  negatives_.emplace(source.graph, task.negatives);
  link_ = task;
}

sampler::link_options minibatch_loader::link_options_of(const link_task& task) const {
  return {.batch_size = options_.batch_size,
          .seed = sampler_.options().seed,
          .negatives = task.negatives,
          .exclude = task.exclude,
          .shuffle = task.shuffle};
}

minibatch_loader::~minibatch_loader() = default;

void minibatch_loader::start_epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) {
  current_.reset();
  current_ = std::make_unique<epoch_stream>(this->epoch(seeds, epoch));
}

namespace {

void check_started(const epoch_stream* stream, const char* call) {
  BULKGNN_EXPECTS(stream != nullptr, "minibatch_loader::{}: call start_epoch first", call);
}

}  // namespace

std::optional<ready_minibatch> minibatch_loader::next() {
  check_started(current_.get(), "next");
  return current_->next();
}

std::int64_t minibatch_loader::num_minibatches() const {
  check_started(current_.get(), "num_minibatches");
  return current_->num_minibatches();
}

epoch_report minibatch_loader::report() const {
  check_started(current_.get(), "report");
  return current_->report();
}

epoch_stream minibatch_loader::epoch(std::span<const vertex_t> seeds, std::uint32_t epoch) & {
  BULKGNN_EXPECTS(!stream_alive_, "minibatch_loader: finish or destroy the previous epoch first");
  const std::int64_t n = source_.rows ? source_.rows->num_vertices() : source_.graph.rows;
  for (const vertex_t v : seeds)
    BULKGNN_EXPECTS(v >= 0 && v < n, "loader: seed vertex {} is not in [0, {})", v, n);
  BULKGNN_EXPECTS(!link_ || seeds.empty(),
                  "loader: a link loader's epochs pass over its positive edges; start them "
                  "without seeds");
  const auto passes_over = link_ ? static_cast<std::int64_t>(link_->positives.source.size())
                                 : static_cast<std::int64_t>(seeds.size());
  std::int64_t count =
      link_ ? (passes_over == 0 ? 0 : sampler::minibatch_count(passes_over, options_.batch_size))
            : sampler::minibatch_count(seeds, options_.batch_size, options_.subgraphs.get());
  if (options_.max_minibatches > 0) count = std::min(count, options_.max_minibatches);
  const auto bulks = static_cast<std::size_t>(options_.bulk_queue);
  const auto ready = static_cast<std::size_t>(options_.ready_queue);
  const auto bytes = static_cast<std::size_t>(queue_bytes_of(options_));
  std::vector<placed_stage> stages;
  if (link_) {
    stages.push_back({std::make_unique<link_shuffle_stage>(link_->positives, *negatives_,
                                                           link_options_of(*link_), options_.bulk),
                      bulks});
    stages.push_back({std::make_unique<link_sample_stage>(sampler_, link_->exclude, options_.slice,
                                                          options_.slices),
                      bulks, bytes});
  } else {
    stages.push_back({std::make_unique<shuffle_stage>(options_.batch_size, options_.bulk,
                                                      sampler_.options().seed, options_.subgraphs),
                      bulks});
    stages.push_back({std::make_unique<sample_stage>(
                          sampler_, sampler::minibatch_split{.slice = options_.slice,
                                                             .slices = options_.slices,
                                                             .ranks = options_.split_ranks}),
                      bulks, bytes});
  }
  stages.push_back(
      {std::make_unique<gather_stage>(source_, feature_buffers_, exec_), ready, bytes});
  if (options_.host_to_device) stages.push_back({options_.host_to_device(), ready, bytes});
  auto p = std::make_unique<epoch_stream::pipeline>(*this, std::move(stages), seeds, epoch, count);
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
  r.stages = pipeline_->reports;
  for (std::size_t s = 0; s < r.stages.size(); ++s)
    if (s + 1 < pipeline_->queues.size())
      r.stages[s].peak_output_bytes = pipeline_->queues[s + 1]->peak_bytes();
  return r;
}

}  // namespace bulkgnn::loader
