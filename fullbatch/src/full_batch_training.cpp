#include "bulkgnn/fullbatch/full_batch_training.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/fullbatch/closed_forms.hpp"
#include "bulkgnn/fullbatch/distributed_aggregation.hpp"
#include "bulkgnn/fullbatch/normalised_adjacency.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace bulkgnn::fullbatch {

namespace {

// The stages whose bytes a run reports; every rank counts all of them.
constexpr std::array<const char*, 4> counted_stages{"setup", "forward", "backward", "gradients"};

stage_bytes sent_by_stage(const comm::traffic_log& log) {
  stage_bytes bytes;
  const auto all = log.all();
  for (const char* stage : counted_stages) {
    const auto found = all.find(stage);
    bytes[stage] = found == all.end() ? 0 : found->second.bytes_sent;
  }
  return bytes;
}

// after − before, summed over every rank (collective over `metrics`).
stage_bytes sum_over_ranks(comm::communicator& metrics, const stage_bytes& after,
                           const stage_bytes& before) {
  std::vector<std::int64_t> values;
  for (const char* stage : counted_stages) values.push_back(after.at(stage) - before.at(stage));
  metrics.all_reduce(std::span<std::int64_t>(values));
  stage_bytes sums;
  for (std::size_t i = 0; i < counted_stages.size(); ++i) sums[counted_stages[i]] = values[i];
  return sums;
}

nlohmann::json to_json(const stage_bytes& bytes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [stage, sent] : bytes) out[stage] = sent;
  return out;
}

// This rank's rows: the part it computes, as old ids in new-id order.
struct part_rows_of_rank {
  int part = 0;
  std::vector<vertex_t> vertices;
};

part_rows_of_rank rows_of_rank(const distributed::vertex_partition& partition, int part) {
  part_rows_of_rank rows{.part = part, .vertices = {}};
  for (auto id = partition.part_offsets[part]; id < partition.part_offsets[part + 1]; ++id)
    rows.vertices.push_back(partition.old_id.empty() ? static_cast<vertex_t>(id)
                                                     : partition.old_id[id]);
  return rows;
}

// d̃ of every vertex by new id: each rank counts its part's rows and the
// ranks all-gather them (8 bytes per vertex to each other rank, once; on
// 1.5d every replica sends its team's).
std::vector<std::int64_t> degrees_by_new_id(comm::communicator& setup, const grid_layout& layout,
                                            const distributed::vertex_partition& partition,
                                            csr_view graph, const part_rows_of_rank& mine) {
  const auto own = degrees_with_self_loops(graph, mine.vertices);
  std::vector<std::int64_t> counts, rank_start{0};
  for (int r = 0; r < layout.ranks(); ++r) {
    counts.push_back(partition.part_size(layout.part_of_rank(r)));
    rank_start.push_back(rank_start.back() + counts.back());
  }
  std::vector<std::int64_t> gathered(static_cast<std::size_t>(rank_start.back()));
  setup.all_gather_v(std::span<const std::int64_t>(own), std::span<std::int64_t>(gathered), counts);
  std::vector<std::int64_t> degrees(static_cast<std::size_t>(partition.num_vertices()));
  for (int p = 0; p < partition.parts; ++p)
    std::copy_n(gathered.begin() + rank_start[layout.rank_of_part(p)], partition.part_size(p),
                degrees.begin() + partition.part_offsets[p]);
  return degrees;
}

// The positions among this rank's rows of the split's vertices it holds.
std::vector<vertex_t> local_rows_of(std::span<const vertex_t> vertices,
                                    const distributed::vertex_partition& partition, int part) {
  std::vector<vertex_t> rows;
  for (const auto v : vertices)
    if (partition.owner[v] == part) rows.push_back(partition.local_index[v]);
  return rows;
}

std::vector<std::int32_t> labels_at(std::span<const std::int32_t> labels,
                                    const part_rows_of_rank& mine, std::span<const vertex_t> rows) {
  std::vector<std::int32_t> out;
  for (const auto r : rows) out.push_back(labels[mine.vertices[r]]);
  return out;
}

// Every rank checks the whole split before any collective, so that a bad
// dataset stops every rank alike, naming the vertex.
void require_labels(const trainer::training_data& data, const data::split& split) {
  BULKGNN_EXPECTS(data.feature_dim > 0, "{}: the dataset has no node features to train on",
                  data.name);
  BULKGNN_EXPECTS(data.num_classes > 0 && !data.labels.empty(),
                  "{}: the dataset has no labels to train on", data.name);
  BULKGNN_EXPECTS(!split.train.empty(), "split '{}' has no training vertices", split.name);
  for (const auto& [set, vertices] :
       {std::pair{"train", split.train}, std::pair{"valid", split.valid},
        std::pair{"test", split.test}})
    for (const vertex_t v : vertices)
      BULKGNN_EXPECTS(data.labels[v] >= 0 && data.labels[v] < data.num_classes,
                      "split '{}': vertex {} of the {} set has label {}, not one of the {} "
                      "classes",
                      split.name, v, set, data.labels[v], data.num_classes);
}

// This rank's feature rows, normalised as --normalize-features asks (the
// shift a minimum over every rank, the divisors each row's own).
trainer::matrix feature_rows(const trainer::training_data& data, const part_rows_of_rank& mine,
                             loader::feature_normalization normalisation,
                             comm::communicator& ranks) {
  trainer::matrix x(static_cast<std::int64_t>(mine.vertices.size()), data.feature_dim);
  kernels::gather_dense_rows(executor{}, data.features, mine.vertices, x.view());
  if (normalisation == loader::feature_normalization::row) {
    const float shift =
        ranks.all_reduce(loader::row_normalizer::minimum(x.view()), comm::reduce_op::min);
    // Divisors of this rank's rows only, looked up by row position.
    const loader::row_normalizer normalizer(shift,
                                            loader::row_normalizer::row_divisors(x.view(), shift));
    std::vector<vertex_t> positions(mine.vertices.size());
    std::iota(positions.begin(), positions.end(), 0);
    normalizer.apply(positions, x.view());
  }
  return x;
}

// Shape-only blocks: the model checks them, the distributed aggregation
// does the product.
std::vector<trainer::aggregation_block> shape_blocks(std::int64_t rows, int layers) {
  csr_matrix shape;
  shape.rows = rows;
  shape.cols = rows;
  shape.indptr = buffer<edge_t>(static_cast<std::size_t>(rows + 1), edge_t{0});
  std::vector<trainer::aggregation_block> blocks;
  for (int l = 0; l < layers; ++l) blocks.push_back({.forward = shape, .backward = shape});
  return blocks;
}

struct accuracy_counts {
  double correct = 0;
  double total = 0;
  [[nodiscard]] std::optional<double> accuracy() const {
    return total > 0 ? std::optional<double>(correct / total) : std::nullopt;
  }
};

}  // namespace

void validate(const full_batch_options& options, int ranks) {
  trainer::validate(options.optimizer);
  BULKGNN_EXPECTS(options.epochs >= 1, "--epochs {}: must be at least 1", options.epochs);
  BULKGNN_EXPECTS(options.eval_every >= 0, "--eval-every {}: must be 0 or more",
                  options.eval_every);
  BULKGNN_EXPECTS(options.partition == "block" || options.partition == "metis",
                  "--partition {}: full-batch training takes block or metis", options.partition);
  BULKGNN_EXPECTS(options.exec.device() == nullptr,
                  "--mode full-batch trains on the host back ends (cpu, reference) in this "
                  "version, not on {}",
                  backend_name(options.exec.kind()));
  const grid_layout layout(options.grid, ranks, options.replication);
  BULKGNN_EXPECTS(!options.compression.compresses() || options.grid == grid_kind::one_d ||
                      options.grid == grid_kind::sar,
                  "--compress {} with --grid {}: compression covers the grids whose every "
                  "message goes to one rank and is used there as it arrives (--grid 1d or sar); "
                  "the 1.5d, 2d and 3d grids sum partial products over several ranks "
                  "(all-reduce, reduce-scatter), which this operator does not cover",
                  options.compression.text(), grid_kind_name(options.grid));
}

nlohmann::json full_batch_epoch::to_json() const {
  const auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"epoch", epoch + 1},
          {"loss", loss},
          {"train_acc", train_acc},
          {"valid_acc", optional(valid_acc)},
          {"test_acc", optional(test_acc)},
          {"seconds", seconds},
          {"eval_seconds", eval_seconds},
          {"compression_rate", compression_rate},
          {"traffic_bytes", fullbatch::to_json(traffic)},
          {"eval_traffic_bytes", fullbatch::to_json(eval_traffic)},
          {"peak_resident_bytes", peak_resident_bytes},
          {"peak_resident_bytes_by_rank", peak_resident_bytes_by_rank},
          {"peak_private_bytes_by_rank", peak_private_bytes_by_rank},
          {"aggregation_peak_bytes", aggregation_peak_bytes}};
}

full_batch_result train_full_batch(const trainer::training_data& data,
                                   const full_batch_options& options, comm::communicator& world,
                                   const full_batch_callback& on_epoch) {
  validate(options, world.size());
  BULKGNN_EXPECTS(data.whole, "full-batch training reads a whole dataset (not one part)");
  const grid_layout layout(options.grid, world.size(), options.replication);
  const int rank = world.rank();
  const auto& exec = options.exec;
  const auto before_setup = sent_by_stage(world.log());
  comm::traffic_log uncounted;
  const auto metrics = world.duplicate("metrics", uncounted);

  const auto& split = data.find_split(options.split);
  require_labels(data, split);
  const auto partition =
      distributed::make_partition(options.partition, data.graph, layout.parts(), options.seed);
  const auto mine = rows_of_rank(partition, layout.part_of_rank(rank));
  std::unique_ptr<distributed_aggregation> aggregation;
  std::int64_t boundary_rows = 0;
  {
    const auto setup = world.split(0, rank, "setup");
    const auto degrees = trainer::find_layer(options.model.kind).full_batch ==
                                 trainer::adjacency_weights::symmetric_with_self_loops
                             ? degrees_by_new_id(*setup, layout, partition, data.graph, mine)
                             : std::vector<std::int64_t>{};
    const auto rows =
        normalised_rows(data.graph, mine.vertices, partition, options.model.kind, degrees);
    aggregation = make_distributed_aggregation(layout, world, partition, rows);
    if (layout.kind() == grid_kind::sar)
      boundary_rows = boundary_rows_of_part(data.graph, partition, mine.part);
  }
  // Gradients and accuracies are summed over one copy of each part's rows:
  // every rank, or on 1.5d the ranks of one replica.
  const int colour = layout.replica_of_rank(rank);
  const auto gradients = world.split(colour, rank, "gradients");
  const auto part_metrics = metrics->split(colour, rank, "metrics");

  const auto train_rows = local_rows_of(split.train, partition, mine.part);
  const auto valid_rows = local_rows_of(split.valid, partition, mine.part);
  const auto test_rows = local_rows_of(split.test, partition, mine.part);
  const auto train_labels = labels_at(data.labels, mine, train_rows);
  const auto valid_labels = labels_at(data.labels, mine, valid_rows);
  const auto test_labels = labels_at(data.labels, mine, test_rows);
  const auto train_total = static_cast<double>(split.train.size());

  const auto x = feature_rows(data, mine, options.normalize_features, *metrics);
  auto config = options.model;
  config.in_features = data.feature_dim;
  config.num_classes = data.num_classes;
  trainer::gnn_model model(config, options.seed, exec);
  model.set_aggregation(*aggregation);
  trainer::adam optimiser(model.parameters().size(), options.optimizer, exec);
  const auto blocks = shape_blocks(aggregation->row_count(), config.layers);

  full_batch_result result;
  result.parameter_count = static_cast<std::int64_t>(model.parameters().size());
  result.setup_traffic = sum_over_ranks(*metrics, sent_by_stage(world.log()), before_setup);
  result.boundary_rows = part_metrics->all_reduce(boundary_rows, comm::reduce_op::sum);
  result.predicted = predicted_epoch_bytes(layout, data.num_nodes, config, result.parameter_count,
                                           result.boundary_rows);
  const auto n_classes = static_cast<std::int64_t>(config.num_classes);
  trainer::matrix train_logits(static_cast<std::int64_t>(train_rows.size()), n_classes);
  trainer::matrix train_grad(static_cast<std::int64_t>(train_rows.size()), n_classes);
  trainer::matrix grad_logits(aggregation->row_count(), n_classes);
  const auto train_share = static_cast<float>(static_cast<double>(train_rows.size()) / train_total);

  // Bytes each stage sent before the epoch's step and after it: the epoch's
  // training traffic and its evaluation's.
  stage_bytes before, after_step;
  trainer::run_epochs(
      0, options.epochs, options.eval_every, result,
      [&](std::int64_t epoch) {
        full_batch_epoch record;
        record.epoch = epoch;
        record.compression_rate = options.compression.rate_at(epoch);
        aggregation->set_compression_rate(record.compression_rate);
        aggregation->reset_peak();
        reset_peak_resident_bytes();
        before = sent_by_stage(world.log());
        const stopwatch step;
        const auto logits =
            model.forward(blocks, x.view(),
                          kernels::dropout_key{.seed = options.seed,
                                               .epoch = static_cast<std::uint32_t>(epoch),
                                               .minibatch = 0,
                                               .row_ids = mine.vertices});
        kernels::gather_dense_rows(exec, logits, train_rows, train_logits.view());
        const auto loss = kernels::softmax_cross_entropy(exec, train_logits.view(), train_labels,
                                                         train_grad.view());
        kernels::fill(exec, grad_logits.data(), 0.0f);
        kernels::scatter_dense_rows(exec, train_grad.view(), train_rows, train_share,
                                    grad_logits.view());
        model.backward(grad_logits.view());
        gradients->all_reduce(model.mutable_gradients());
        optimiser.step(model.parameters(), model.gradients());
        record.seconds = step.seconds();
        after_step = sent_by_stage(world.log());

        std::array<double, 2> totals{loss.loss * static_cast<double>(train_rows.size()),
                                     static_cast<double>(loss.correct)};
        part_metrics->all_reduce(std::span<double>(totals));
        record.loss = totals[0] / train_total;
        record.train_acc = totals[1] / train_total;

        return record;
      },
      [&](full_batch_epoch& record) {
        const stopwatch evaluation;
        const auto eval_logits = model.forward(blocks, x.view(), std::nullopt);
        const auto correct_in = [&](const std::vector<vertex_t>& rows,
                                    const std::vector<std::int32_t>& labels) {
          trainer::matrix picked(static_cast<std::int64_t>(rows.size()), n_classes);
          kernels::gather_dense_rows(exec, eval_logits, rows, picked.view());
          return static_cast<double>(kernels::count_correct(exec, picked.view(), labels));
        };
        std::array<double, 2> counts{correct_in(valid_rows, valid_labels),
                                     correct_in(test_rows, test_labels)};
        part_metrics->all_reduce(std::span<double>(counts));
        record.valid_acc =
            accuracy_counts{counts[0], static_cast<double>(split.valid.size())}.accuracy();
        record.test_acc =
            accuracy_counts{counts[1], static_cast<double>(split.test.size())}.accuracy();
        record.eval_seconds = evaluation.seconds();
      },
      [&](full_batch_epoch record) {
        record.traffic = sum_over_ranks(*metrics, after_step, before);
        record.eval_traffic = sum_over_ranks(*metrics, sent_by_stage(world.log()), after_step);
        record.peak_resident_bytes_by_rank = metrics->all_gather(peak_resident_bytes());
        record.peak_private_bytes_by_rank = metrics->all_gather(
            std::max<std::int64_t>(0, peak_resident_bytes() - resident_file_bytes()));
        record.peak_resident_bytes = *std::max_element(record.peak_resident_bytes_by_rank.begin(),
                                                       record.peak_resident_bytes_by_rank.end());
        record.aggregation_peak_bytes =
            metrics->all_reduce(aggregation->peak_transient_bytes(), comm::reduce_op::max);
        result.epochs.push_back(record);
        if (on_epoch) on_epoch(result.epochs.back(), result);
      });

  result.parameters = model.parameters_on_host();
  trainer::require_same_weights(*metrics, result.parameters, "full-batch training");
  return result;
}

}  // namespace bulkgnn::fullbatch
