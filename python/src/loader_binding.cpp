#include "bindings.hpp"
#include "dlpack_array.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/sampler_program.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/session/loading.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace py = pybind11;

namespace bulkgnn::python {

namespace {

using minibatch_ptr = std::shared_ptr<const loader::ready_minibatch>;

py::dict report_dict(const loader::epoch_report& report) {
  py::list stages;
  for (const auto& s : report.stages)
    stages.append(py::dict(py::arg("name") = s.name, py::arg("busy_seconds") = s.busy_seconds,
                           py::arg("input_wait_seconds") = s.input_wait_seconds,
                           py::arg("output_wait_seconds") = s.output_wait_seconds,
                           py::arg("items") = s.items,
                           py::arg("peak_output_bytes") = s.peak_output_bytes));
  return py::dict(py::arg("seconds") = report.seconds, py::arg("stages") = stages);
}

template <class T>
dlpack_array array_of(const minibatch_ptr& mb, std::span<const T> values) {
  return dlpack_array(mb, values, {static_cast<std::int64_t>(values.size())});
}

// Where memory of `space` is, as DLPack names it: device memory on the
// loader's GPU `gpu`, anything else (host, pinned) on the host.
DLDevice device_of(memory_space space, int gpu) {
  return space == memory_space::device ? DLDevice{kDLCUDA, gpu} : DLDevice{kDLCPU, 0};
}

// One of a minibatch's buffers, where it lives.
template <class T>
dlpack_array array_of(const minibatch_ptr& mb, const buffer<T>& values, int gpu) {
  return dlpack_array(mb, std::span<const T>(values.data(), values.size()),
                      {static_cast<std::int64_t>(values.size())}, device_of(values.space(), gpu));
}

// One epoch of minibatches. next() blocks without the GIL while the pipeline
// works; close() stops the pipeline's threads. Both may be called from any
// Python thread: the mutex serialises them.
class epoch_iterator {
 public:
  // `owner` keeps what the stream's stages use alive.
  // `positions`: where a node minibatch's seeds sit in the loader's seeds
  // (none for link minibatches, which carry their own input ids);
  // `loss_weights`: each vertex's loss weight as a seed, owned by `owner`
  // (empty but for GraphSAINT).
  // `exec`: where the minibatches are made (a cuda one hands them out in
  // its GPU's memory).
  epoch_iterator(std::shared_ptr<void> owner, std::shared_ptr<const data::dataset> dataset,
                 executor exec, loader::epoch_stream stream,
                 std::optional<session::seed_positions> positions = std::nullopt,
                 std::span<const float> loss_weights = {})
      : owner_(std::move(owner)),
        dataset_(std::move(dataset)),
        exec_(std::move(exec)),
        positions_(std::move(positions)),
        loss_weights_(loss_weights) {
    stream_.emplace(std::move(stream));
  }

  std::optional<loader::ready_minibatch> next() {
    const std::scoped_lock lock(mutex_);
    if (!stream_) return std::nullopt;
    try {
      auto mb = stream_->next();
      if (!mb) close_locked();
      return mb;
    } catch (...) {
      stream_.reset();
      throw;
    }
  }

  void close() {
    const std::scoped_lock lock(mutex_);
    close_locked();
  }

  [[nodiscard]] loader::epoch_report report() {
    const std::scoped_lock lock(mutex_);
    return stream_ ? stream_->report() : last_report_;
  }
  [[nodiscard]] const std::shared_ptr<const data::dataset>& dataset() const { return dataset_; }
  [[nodiscard]] const executor& exec() const { return exec_; }
  // A node minibatch's input_id; empty for link minibatches.
  [[nodiscard]] std::vector<std::int64_t> input_id(const loader::ready_minibatch& mb) const {
    return positions_ ? positions_->at(mb.batch) : std::vector<std::int64_t>{};
  }
  // The loss weight of every input node (PyG's node_norm) of a minibatch in
  // host memory; none without loss weights.
  [[nodiscard]] std::optional<std::vector<float>> node_norm(const sampler::minibatch& batch) const {
    if (loss_weights_.empty()) return std::nullopt;
    std::vector<float> norm;
    norm.reserve(batch.input_nodes.size());
    for (const vertex_t v : batch.input_nodes) norm.push_back(loss_weights_[v]);
    return norm;
  }

 private:
  void close_locked() {
    if (!stream_) return;
    last_report_ = stream_->report();
    stream_.reset();
  }

  std::shared_ptr<void> owner_;  // outlives the stream, whose stages use it
  std::shared_ptr<const data::dataset> dataset_;
  executor exec_;
  std::optional<session::seed_positions> positions_;
  std::span<const float> loss_weights_;
  std::mutex mutex_;
  std::optional<loader::epoch_stream> stream_;
  loader::epoch_report last_report_;
};

// The session's loading (minibatch_loading or link_loading) and the epoch
// iterator currently running on it (at most one at a time).
template <class Loading>
class pipeline_loader : public std::enable_shared_from_this<pipeline_loader<Loading>> {
 public:
  template <class... Args>
  explicit pipeline_loader(Args&&... args) : loading_(std::forward<Args>(args)...) {}

  // Ends the running epoch, if any, and starts `epoch`. Without the GIL.
  std::shared_ptr<epoch_iterator> start(std::uint32_t epoch) {
    const std::scoped_lock lock(start_mutex_);
    if (auto previous = current_.lock()) previous->close();
    std::optional<session::seed_positions> positions;
    std::span<const float> loss_weights;
    if constexpr (std::is_same_v<Loading, session::minibatch_loading>) {
      positions = loading_.positions(epoch);
      loss_weights = loading_.seed_loss_weights();
    }
    auto it = std::make_shared<epoch_iterator>(this->shared_from_this(), loading_.dataset(),
                                               loading_.exec(), loading_.epoch(epoch),
                                               std::move(positions), loss_weights);
    current_ = it;
    return it;
  }

  [[nodiscard]] std::int64_t num_minibatches() const { return loading_.minibatches_per_epoch(); }

 private:
  // Holds no Python object: it may go (with the last epoch) without the GIL.
  Loading loading_;
  std::mutex start_mutex_;  // Python threads may start epochs at once
  std::weak_ptr<epoch_iterator> current_;
};

using neighbor_loader = pipeline_loader<session::minibatch_loading>;
using link_neighbor_loader = pipeline_loader<session::link_loading>;

// An array that owns `values` (moved, not copied).
template <class T>
dlpack_array owned_array(std::vector<T> values, std::vector<std::int64_t> shape) {
  auto owner = std::make_shared<std::vector<T>>(std::move(values));
  const std::span<const T> view(*owner);
  return dlpack_array(std::move(owner), view, std::move(shape));
}

// What Python holds of one minibatch: the pipeline's ready_minibatch, shared
// with every array handed out of it. A GPU loader's minibatch lives in its
// GPU's memory (`gpu`; -1 on the host); a host copy of its index arrays
// (`host`) serves what is computed from them on the host (PyG's edge_index,
// the input nodes' labels, digests).
struct minibatch_handle {
  minibatch_ptr mb;
  std::shared_ptr<const data::dataset> dataset;
  std::vector<std::int64_t> input_id;           // a node minibatch's (PyG's input_id)
  std::optional<std::vector<float>> node_norm;  // GraphSAINT's, per input node
  int gpu = -1;
  std::shared_ptr<const sampler::minibatch> host;

  [[nodiscard]] const sampler::minibatch& host_batch() const { return host ? *host : mb->batch; }
};

// The handle of a minibatch the pipeline made. A GPU's minibatch is complete
// when handed out (its stream has finished; the host copy waits for it too),
// and its buffers are freed only once the GPU has finished every stream's
// work: a consumer's kernels (torch runs on streams of its own) may read them
// until then.
minibatch_handle handle_of(const epoch_iterator& it, loader::ready_minibatch mb) {
  minibatch_handle h;
  h.dataset = it.dataset();
  if (it.exec().kind() != backend::cuda) {
    h.input_id = it.input_id(mb);
    h.node_norm = it.node_norm(mb.batch);
    h.mb = std::make_shared<const loader::ready_minibatch>(std::move(mb));
    return h;
  }
  it.exec().synchronize();
  h.input_id = it.input_id(mb);
  h.gpu = it.exec().device()->device();
  h.host = std::make_shared<const sampler::minibatch>(sampler::copy_to_host(mb.batch));
  h.node_norm = it.node_norm(*h.host);
  // The deleter holds the executor: its context owns the memory pool the
  // buffers go back to, which must outlive the loader when a tensor does.
  h.mb = minibatch_ptr(new loader::ready_minibatch(std::move(mb)),
                       [gpu = h.gpu, exec = it.exec()](const loader::ready_minibatch* done) {
                         try {
                           kernels::synchronize_device(gpu);
                         } catch (const std::exception&) {
                           // A failed GPU fails the next call that uses it too.
                         }
                         delete done;
                       });
  return h;
}

// Labels of every input node (a gathered copy), or None without labels.
py::object input_labels(const minibatch_handle& h) {
  const auto labels = h.dataset->labels();
  if (labels.empty()) return py::none();
  const auto& input_nodes = h.host_batch().input_nodes;
  std::vector<std::int32_t> gathered;
  gathered.reserve(input_nodes.size());
  for (const vertex_t v : input_nodes) gathered.push_back(labels[v]);
  const auto n = static_cast<std::int64_t>(gathered.size());
  return py::cast(owned_array(std::move(gathered), {n}));
}

struct block_handle {
  minibatch_ptr mb;
  std::shared_ptr<const data::dataset> dataset;
  std::size_t layer = 0;
  int gpu = -1;
  std::shared_ptr<const sampler::minibatch> host;  // as minibatch_handle's

  [[nodiscard]] const csr_matrix& block() const { return mb->batch.blocks[layer]; }
  [[nodiscard]] const sampler::minibatch& host_batch() const { return host ? *host : mb->batch; }
};

// The edges of a block's entries in the dataset's graph: entry (destination
// r, source c) is the edge input_nodes[c] → input_nodes[r], found in row
// input_nodes[r] by binary search. Its number is dataset::edge_numbers' (the
// edge_index a dataset was built from), else its CSR position; -1 where the
// graph has no such edge (LADIES' self loops, PinSAGE's walk neighbours).
// Copies of a repeated edge all take the first copy's. With `weights`, the
// graph's weight of each edge too (0 where there is none).
struct entry_edges {
  std::vector<std::int64_t> numbers;
  std::vector<float> weights;
};

void append_entry_edges(const data::dataset& ds, std::span<const vertex_t> input_nodes,
                        const csr_matrix& block, std::int64_t first_row, bool weights,
                        entry_edges& out) {
  const csr_view graph = ds.graph();
  const auto numbers = ds.edge_numbers();
  for (std::int64_t row = first_row; row < block.rows; ++row) {
    const vertex_t destination = input_nodes[static_cast<std::size_t>(row)];
    const auto neighbours = graph.row(destination);
    for (edge_t e = block.indptr[row]; e < block.indptr[row + 1]; ++e) {
      const vertex_t source = input_nodes[static_cast<std::size_t>(block.indices[e])];
      const auto found = std::ranges::lower_bound(neighbours, source);
      if (found == neighbours.end() || *found != source) {
        out.numbers.push_back(-1);
        if (weights) out.weights.push_back(0.0f);
        continue;
      }
      const auto position = graph.indptr[destination] + (found - neighbours.begin());
      out.numbers.push_back(numbers.empty() ? position
                                            : numbers[static_cast<std::size_t>(position)]);
      if (weights) out.weights.push_back(graph.values[position]);
    }
  }
}

dlpack_array block_edge_numbers(const block_handle& b) {
  entry_edges edges;
  {
    const py::gil_scoped_release unlocked;
    const auto& batch = b.host_batch();
    edges.numbers.reserve(static_cast<std::size_t>(batch.blocks[b.layer].nnz()));
    append_entry_edges(*b.dataset, batch.input_nodes, batch.blocks[b.layer], 0, false, edges);
  }
  const auto count = static_cast<std::int64_t>(edges.numbers.size());
  return owned_array(std::move(edges.numbers), {count});
}

// PyG's edge_index of a minibatch (see bulkgnn/_adapters.py, pyg_fields): hop
// h keeps the rows of block L-1-h whose destinations hop h added, as
// (source, target) positions in input_nodes, row 0 the sources; with the
// edges' weights where the sampler gives them, and the edge count per hop.
struct pyg_edge_arrays {
  std::int64_t edges = 0;
  std::vector<std::int64_t> edge_index;  // 2 x edges
  std::vector<float> weights;            // edges, or empty
  std::vector<std::int64_t> per_hop;
};

pyg_edge_arrays pyg_edges(const sampler::minibatch& mb) {
  pyg_edge_arrays out;
  std::int64_t first_row = 0;
  for (auto block = mb.blocks.rbegin(); block != mb.blocks.rend(); ++block) {
    out.per_hop.push_back(block->indptr[block->rows] - block->indptr[first_row]);
    out.edges += out.per_hop.back();
    first_row = block->rows;
  }
  out.edge_index.resize(static_cast<std::size_t>(2 * out.edges));
  auto* sources = out.edge_index.data();
  auto* targets = sources + out.edges;
  first_row = 0;
  for (auto block = mb.blocks.rbegin(); block != mb.blocks.rend(); ++block) {
    for (std::int64_t row = first_row; row < block->rows; ++row)
      for (edge_t e = block->indptr[row]; e < block->indptr[row + 1]; ++e) {
        *sources++ = block->indices[e];
        *targets++ = row;
      }
    if (!block->values.empty())
      out.weights.insert(out.weights.end(), block->values.begin() + block->indptr[first_row],
                         block->values.end());
    first_row = block->rows;
  }
  return out;
}

// PyG's e_id, in pyg_edges' order, and where the graph has edge weights
// the weight of each edge (PyG slices its Data's edge_weight by e_id), else
// None.
py::tuple pyg_edge_numbers(const minibatch_handle& h) {
  const bool weights = !h.dataset->graph().values.empty();
  entry_edges edges;
  {
    const py::gil_scoped_release unlocked;
    const auto& batch = h.host_batch();
    std::int64_t first_row = 0;
    for (auto block = batch.blocks.rbegin(); block != batch.blocks.rend(); ++block) {
      append_entry_edges(*h.dataset, batch.input_nodes, *block, first_row, weights, edges);
      first_row = block->rows;
    }
  }
  const auto count = static_cast<std::int64_t>(edges.numbers.size());
  py::object graph_weights = py::none();
  if (weights) graph_weights = py::cast(owned_array(std::move(edges.weights), {count}));
  return py::make_tuple(owned_array(std::move(edges.numbers), {count}), graph_weights);
}

py::tuple pyg_edge_tuple(const minibatch_handle& h) {
  pyg_edge_arrays edges;
  {
    const py::gil_scoped_release unlocked;
    edges = pyg_edges(h.host_batch());
  }
  py::object weights = py::none();
  if (!edges.weights.empty())
    weights = py::cast(owned_array(std::move(edges.weights), {edges.edges}));
  return py::make_tuple(owned_array(std::move(edges.edge_index), {2, edges.edges}), weights,
                        edges.per_hop);
}

// A link minibatch's supervision edges as 2 x K local ids, or None.
py::object edge_label_index(const minibatch_handle& h) {
  if (!h.mb->link) return py::none();
  const auto& s = *h.mb->link;
  const auto k = static_cast<std::int64_t>(s.label_source.size());
  std::vector<std::int64_t> index(s.label_source.begin(), s.label_source.end());
  index.insert(index.end(), s.label_target.begin(), s.label_target.end());
  return py::cast(owned_array(std::move(index), {2, k}));
}

// Triplet negatives, P x amount local ids (P alone for one each, as PyG
// squeezes them), or None.
py::object negative_targets(const minibatch_handle& h) {
  if (!h.mb->link || h.mb->link->negative_target.empty()) return py::none();
  const auto& s = *h.mb->link;
  const auto per_positive = static_cast<std::int64_t>(s.negative_target.size()) / s.positives();
  std::vector<std::int64_t> index(s.negative_target.begin(), s.negative_target.end());
  if (per_positive == 1) return py::cast(owned_array(std::move(index), {s.positives()}));
  return py::cast(owned_array(std::move(index), {s.positives(), per_positive}));
}

py::object adapter(const char* name, const py::object& mb, bool e_id) {
  return py::module_::import("bulkgnn._adapters").attr(name)(mb, py::arg("e_id") = e_id);
}

void bind_minibatch(py::module_& m) {
  py::class_<block_handle>(m, "Block",
                           "One layer's message-flow graph in CSR: a row per destination, a column "
                           "per source, local ids; the destinations are the first sources.")
      .def_property_readonly("num_dst", [](const block_handle& b) { return b.block().rows; })
      .def_property_readonly("num_src", [](const block_handle& b) { return b.block().cols; })
      .def_property_readonly(
          "num_edges", [](const block_handle& b) { return b.host_batch().blocks[b.layer].nnz(); })
      .def_property_readonly(
          "indptr", [](const block_handle& b) { return array_of(b.mb, b.block().indptr, b.gpu); })
      .def_property_readonly(
          "indices", [](const block_handle& b) { return array_of(b.mb, b.block().indices, b.gpu); })
      .def_property_readonly(
          "values",
          [](const block_handle& b) -> py::object {
            if (b.block().values.empty()) return py::none();
            return py::cast(array_of(b.mb, b.block().values, b.gpu));
          },
          "Edge weights (layer-wise samplers), or None.")
      .def_property_readonly("e_id", &block_edge_numbers,
                             "Each entry's edge in the dataset's graph (its number in the "
                             "edge_index a Dataset was built from, else its CSR position), "
                             "-1 where the entry is no edge of the graph (a LADIES self loop, "
                             "a PinSAGE walk neighbour); computed on each call.")
      .def("__repr__", [](const block_handle& b) {
        return py::str("bulkgnn.Block(num_dst={}, num_src={}, num_edges={})")
            .format(b.block().rows, b.block().cols, b.host_batch().blocks[b.layer].nnz());
      });

  py::class_<minibatch_handle>(
      m, "Minibatch",
      "One sampled minibatch; its arrays view the loader's buffers through DLPack without a "
      "copy, and keep them (the features return to the loader's pool when the last is freed).")
      .def_property_readonly("index", [](const minibatch_handle& h) { return h.mb->batch.index; })
      .def_property_readonly(
          "batch_size", [](const minibatch_handle& h) { return h.mb->batch.seeds.size(); },
          "Number of seeds (this rank's slice of them).")
      .def_property_readonly(
          "device",
          [](const minibatch_handle& h) {
            return h.gpu < 0 ? std::string("cpu") : "cuda:" + std::to_string(h.gpu);
          },
          "Where the loader made it, as torch names devices: 'cpu', or 'cuda:N' for a loader "
          "on a GPU (seeds, labels, input_nodes, features and blocks are in its memory; the "
          "arrays computed from them, such as input_labels and PyG's edge_index, on the host).")
      .def_property_readonly(
          "seeds",
          [](const minibatch_handle& h) { return array_of(h.mb, h.mb->batch.seeds, h.gpu); },
          "Global ids; the first batch_size input nodes.")
      .def_property_readonly(
          "labels",
          [](const minibatch_handle& h) -> py::object {
            if (h.mb->batch.labels.empty()) return py::none();
            return py::cast(array_of(h.mb, h.mb->batch.labels, h.gpu));
          },
          "Labels of the seeds, or None.")
      .def_property_readonly(
          "input_nodes",
          [](const minibatch_handle& h) { return array_of(h.mb, h.mb->batch.input_nodes, h.gpu); },
          "Global ids of blocks[0]'s sources, seeds first.")
      .def_property_readonly(
          "features",
          [](const minibatch_handle& h) -> py::object {
            if (h.mb->feature_columns == 0) return py::none();
            const auto f = h.mb->input_features();
            return py::cast(
                dlpack_array(h.mb, f.data, {f.rows, f.cols}, device_of(f.space, h.gpu)));
          },
          "Features of the input nodes, len(input_nodes) x num_features, or None.")
      .def_property_readonly(
          "blocks",
          [](const minibatch_handle& h) {
            std::vector<block_handle> blocks;
            for (std::size_t l = 0; l < h.mb->batch.blocks.size(); ++l)
              blocks.push_back({h.mb, h.dataset, l, h.gpu, h.host});
            return blocks;
          },
          "DGL order: blocks[0] is the input-most layer, blocks[-1] has the seeds as rows.")
      .def_property_readonly("input_labels", &input_labels,
                             "Labels of every input node (a copy, gathered on each call), or None.")
      .def("_pyg_edges", &pyg_edge_tuple,
           "(edge_index, edge_weight or None, num_sampled_edges) in PyG's layout.")
      .def("_pyg_edge_ids", &pyg_edge_numbers,
           "(e_id, the graph's weight of each edge or None), in _pyg_edges' order.")
      .def(
          "digest",
          [](const minibatch_handle& h) {
            return h.mb->link ? sampler::digest(h.host_batch(), *h.mb->link)
                              : sampler::digest(h.host_batch());
          },
          "The sampler's 64-bit digest of this minibatch (as `bulkgnn sample` computes it); a "
          "link minibatch's folds in its supervision.")
      .def_property_readonly(
          "is_link", [](const minibatch_handle& h) { return h.mb->link.has_value(); },
          "Whether it is a link minibatch (LinkNeighborLoader).")
      .def_property_readonly("edge_label_index", &edge_label_index,
                             "A link minibatch's supervision edges, 2 x K, local ids (positions "
                             "in input_nodes): the positives, then (binary) the negatives; None "
                             "for a node minibatch.")
      .def_property_readonly(
          "edge_label",
          [](const minibatch_handle& h) -> py::object {
            if (!h.mb->link || h.mb->link->edge_label.empty()) return py::none();
            return py::cast(array_of<float>(h.mb, h.mb->link->edge_label));
          },
          "1 for positives, 0 for binary negatives; None for triplet negatives and node "
          "minibatches.")
      .def_property_readonly(
          "input_id",
          [](const minibatch_handle& h) -> py::object {
            if (h.mb->link) return py::cast(array_of<std::int64_t>(h.mb, h.mb->link->input_id));
            return py::cast(
                owned_array(h.input_id, {static_cast<std::int64_t>(h.input_id.size())}));
          },
          "PyG's input_id: a node minibatch's seeds' positions in the loader's seeds "
          "(input_nodes), in the seeds' order; a link minibatch's positives' positions in its "
          "edge_label_index.")
      .def_property_readonly(
          "node_norm",
          [](const minibatch_handle& h) -> py::object {
            if (!h.node_norm) return py::none();
            return py::cast(
                owned_array(*h.node_norm, {static_cast<std::int64_t>(h.node_norm->size())}));
          },
          "GraphSAINT's loss normalisation of every input node (PyG's node_norm): a "
          "minibatch's loss is Σ node_norm[i]·loss[i] over its seeds (the first batch_size), "
          "not their mean; None for other samplers.")
      .def_property_readonly("dst_neg_index", &negative_targets,
                             "Triplet negatives: positive i's corrupted targets in row i, local "
                             "ids (one column squeezed away, as PyG); None otherwise.")
      .def(
          "to_pyg", [](const py::object& self, bool e_id) { return adapter("to_pyg", self, e_id); },
          py::kw_only(), py::arg("e_id") = false,
          "A torch_geometric.data.Data laid out as PyG's NeighborLoader yields it; e_id=True "
          "adds each edge's e_id (and, on a weighted dataset, the edges' edge_weight), which "
          "PyG always gives and which costs a binary search per edge.")
      .def(
          "to_dgl", [](const py::object& self, bool e_id) { return adapter("to_dgl", self, e_id); },
          py::kw_only(), py::arg("e_id") = false,
          "What DGL's DataLoader yields: (input_nodes, output_nodes, blocks); a link "
          "minibatch (input_nodes, pair_graph, neg_pair_graph, blocks), as over DGL's "
          "as_edge_prediction_sampler. e_id=True sets each block's edata[dgl.EID], as DGL's "
          "samplers do.")
      .def("__repr__", [](const minibatch_handle& h) {
        return py::str("bulkgnn.Minibatch(index={}, batch_size={}, input_nodes={}, layers={})")
            .format(h.mb->batch.index, h.mb->batch.seeds.size(), h.mb->batch.input_nodes.size(),
                    h.mb->batch.blocks.size());
      });
}

void bind_epoch(py::module_& m) {
  py::class_<epoch_iterator, std::shared_ptr<epoch_iterator>>(m, "Epoch",
                                                              "An iterator over one epoch.")
      .def("__iter__", [](const py::object& self) { return self; })
      .def("__next__",
           [](epoch_iterator& it) {
             std::optional<loader::ready_minibatch> mb;
             minibatch_handle handle;
             {
               const py::gil_scoped_release unlocked;
               mb = it.next();
               if (mb) handle = handle_of(it, std::move(*mb));
             }
             // Ctrl-C while the pipeline worked: stop its threads, then raise.
             if (PyErr_CheckSignals() != 0) {
               {
                 const py::gil_scoped_release unlocked;
                 it.close();
               }
               throw py::error_already_set();
             }
             if (!mb) throw py::stop_iteration();
             return handle;
           })
      .def("close", &epoch_iterator::close, py::call_guard<py::gil_scoped_release>(),
           "Stops the epoch's pipeline; the minibatches already handed out stay valid.")
      .def(
          "report", [](epoch_iterator& it) { return report_dict(it.report()); },
          "Per-stage busy and wait seconds, items, and the most bytes its output queue held, so "
          "far (complete once the epoch is exhausted).");
}

// The sampler options both loaders' keywords name.
sampler::sampler_options sampler_options_of(
    const std::string& sampler_name, std::vector<std::int64_t> fanouts, bool replace, bool weighted,
    std::uint32_t seed, std::int64_t layers,
    const std::map<std::string, std::int64_t>& sampler_parameters) {
  return {.kind = std::string(sampler::find_sampler(sampler_name).name),
          .fanouts = std::move(fanouts),
          .replacement = replace ? kernels::replacement::with : kernels::replacement::without,
          .weighted = weighted,
          .seed = seed,
          .layers = layers,
          .parameters = {sampler_parameters.begin(), sampler_parameters.end()}};
}

void bind_neighbor_loader(py::module_& m) {
  py::class_<neighbor_loader, std::shared_ptr<neighbor_loader>>(
      m, "Loader", "The C++ pipeline behind bulkgnn.NeighborLoader (arguments already checked).")
      .def(py::init([](std::shared_ptr<data::dataset> dataset,
                       const py::array_t<vertex_t, py::array::c_style>& seeds,
                       std::vector<std::int64_t> fanouts, std::int64_t batch_size, bool shuffle,
                       std::uint32_t seed, std::int64_t bulk, int threads,
                       const std::string& sampler_name, bool replace, bool weighted,
                       std::int64_t prefetch, int rank, int world_size,
                       const std::string& backend_name,
                       const std::map<std::string, std::int64_t>& sampler_parameters,
                       std::int64_t layers, std::int64_t max_minibatches, std::int64_t queue_bytes,
                       const std::string& subgraph_cache) {
             auto sampling = sampler_options_of(sampler_name, std::move(fanouts), replace, weighted,
                                                seed, layers, sampler_parameters);
             sampling.cache_dir = subgraph_cache;
             const session::loading_plan plan{
                 .sampling = std::move(sampling),
                 .loading = {.batch_size = batch_size,
                             .bulk = bulk,
                             .ready_queue = prefetch,
                             .queue_bytes = queue_bytes,
                             .max_minibatches = max_minibatches,
                             .slice = rank,
                             .slices = world_size},
                 .execution = {.device = backend_name, .threads = threads},
                 .shuffle = shuffle};
             // As the bulkgnn command does: the sampler's bulk buffers of tens
             // of MiB are reused instead of mapped and faulted in afresh.
             static std::once_flag allocator_tuned;
             std::call_once(allocator_tuned, keep_freed_buffers_for_reuse);
             std::vector<vertex_t> ids(seeds.data(), seeds.data() + seeds.size());
             const py::gil_scoped_release unlocked;  // FastGCN's setup reads the whole graph
             return std::make_shared<neighbor_loader>(std::move(dataset), std::move(ids), plan);
           }),
           py::arg("dataset"), py::arg("seeds"), py::arg("fanouts"), py::arg("batch_size"),
           py::arg("shuffle"), py::arg("seed"), py::arg("bulk"), py::arg("threads"),
           py::arg("sampler"), py::arg("replace"), py::arg("weighted"), py::arg("prefetch"),
           py::arg("rank"), py::arg("world_size"), py::arg("backend"),
           py::arg("sampler_parameters"), py::arg("layers"), py::arg("max_minibatches"),
           py::arg("queue_bytes"), py::arg("subgraph_cache"))
      .def("epoch", &neighbor_loader::start, py::arg("epoch"),
           py::call_guard<py::gil_scoped_release>(),
           "Ends the running epoch, if any, and starts this one.")
      .def("__len__", &neighbor_loader::num_minibatches);
}

void bind_link_neighbor_loader(py::module_& m) {
  py::class_<link_neighbor_loader, std::shared_ptr<link_neighbor_loader>>(
      m, "LinkLoader",
      "The C++ pipeline behind bulkgnn.LinkNeighborLoader (arguments already checked).")
      .def(py::init([](std::shared_ptr<data::dataset> dataset,
                       const py::array_t<vertex_t, py::array::c_style>& source,
                       const py::array_t<vertex_t, py::array::c_style>& target,
                       const py::array_t<float, py::array::c_style>& label,
                       std::vector<std::int64_t> fanouts, std::int64_t batch_size, bool shuffle,
                       std::uint32_t seed, std::int64_t bulk, int threads,
                       const std::string& sampler_name, bool replace, bool weighted,
                       std::int64_t prefetch, const std::string& backend_name,
                       const std::map<std::string, std::int64_t>& sampler_parameters,
                       std::int64_t layers, std::int64_t queue_bytes,
                       const std::string& negative_mode, double amount,
                       const std::string& distribution, bool strict, const std::string& exclude) {
             const session::link_plan plan{
                 .nodes = {.sampling =
                               sampler_options_of(sampler_name, std::move(fanouts), replace,
                                                  weighted, seed, layers, sampler_parameters),
                           .loading = {.batch_size = batch_size,
                                       .bulk = bulk,
                                       .ready_queue = prefetch,
                                       .queue_bytes = queue_bytes},
                           .execution = {.device = backend_name, .threads = threads},
                           .shuffle = shuffle},
                 .negatives = {.mode = sampler::parse_negative_mode(negative_mode),
                               .amount = amount,
                               .distribution = sampler::parse_negative_distribution(distribution),
                               .strict = strict},
                 .exclude = sampler::parse_edge_exclusion(exclude)};
             static std::once_flag allocator_tuned;
             std::call_once(allocator_tuned, keep_freed_buffers_for_reuse);
             std::vector<vertex_t> sources(source.data(), source.data() + source.size());
             std::vector<vertex_t> targets(target.data(), target.data() + target.size());
             std::vector<float> labels(label.data(), label.data() + label.size());
             const py::gil_scoped_release unlocked;
             return std::make_shared<link_neighbor_loader>(std::move(dataset), std::move(sources),
                                                           std::move(targets), std::move(labels),
                                                           plan);
           }),
           py::arg("dataset"), py::arg("source"), py::arg("target"), py::arg("label"),
           py::arg("fanouts"), py::arg("batch_size"), py::arg("shuffle"), py::arg("seed"),
           py::arg("bulk"), py::arg("threads"), py::arg("sampler"), py::arg("replace"),
           py::arg("weighted"), py::arg("prefetch"), py::arg("backend"),
           py::arg("sampler_parameters"), py::arg("layers"), py::arg("queue_bytes"),
           py::arg("negative_mode"), py::arg("amount"), py::arg("distribution"), py::arg("strict"),
           py::arg("exclude"))
      .def("epoch", &link_neighbor_loader::start, py::arg("epoch"),
           py::call_guard<py::gil_scoped_release>(),
           "Ends the running epoch, if any, and starts this one.")
      .def("__len__", &link_neighbor_loader::num_minibatches);
}

// A sampler's entry as bulkgnn.samplers() lists it.
py::dict sampler_dict(const sampler::sampler_entry& entry) {
  py::dict parameters;
  for (const auto& p : entry.parameters)
    parameters[py::str(std::string(p.name))] =
        py::dict(py::arg("help") = std::string(p.help), py::arg("default") = p.default_value,
                 py::arg("min") = p.min, py::arg("max") = p.max);
  py::list aliases;
  for (const auto alias : entry.aliases) aliases.append(std::string(alias));
  return py::dict(
      py::arg("name") = std::string(entry.name), py::arg("aliases") = aliases,
      py::arg("summary") = std::string(entry.summary), py::arg("layer") = std::string(entry.layer),
      py::arg("fanout") = entry.fanout == sampler::fanout_unit::per_destination ? "per destination"
                                                                                : "per minibatch",
      py::arg("replace") = entry.takes_replacement, py::arg("weighted") = entry.takes_weights,
      py::arg("batches_subgraphs") = entry.batches_subgraphs(), py::arg("parameters") = parameters);
}

// The sampler table and the registered sampler programs, for NeighborLoader's
// checks and docstring, and bulkgnn.define_sampler's registration.
void bind_sampler_table(py::module_& m) {
  m.def(
      "_gpu_support",
      [] {
        py::list names;
        for (const auto& d : kernels::visible_cuda_devices()) names.append(d.name);
        return py::make_tuple(kernels::cuda_compiled(), names, session::rank_gpu());
      },
      "(whether this build has the CUDA back end, the names of the GPUs it sees, the id of "
      "the one a loader of this process takes, or -1).");
  m.def(
      "samplers",
      [] {
        py::list table;
        for (const auto& entry : sampler::sampler_table()) table.append(sampler_dict(entry));
        for (const auto* entry : sampler::registered_programs()) table.append(sampler_dict(*entry));
        return table;
      },
      "The registered samplers, built-in and defined (bulkgnn.define_sampler): name, aliases, "
      "summary, the layer their blocks are made for, what a fanout counts, whether replace= and "
      "weighted= apply, whether its minibatches are subgraphs (batches_subgraphs: batch_size "
      "counts clusters or a GraphSAINT budget), and their own parameters.");
  m.def(
      "register_sampler_program",
      [](const std::string& text, const std::string& origin) {
        const auto program = sampler::parse_sampler_program(text, origin);
        (void)trainer::find_layer(program.layer, fmt::format("{}: layer", origin));
        return sampler_dict(sampler::register_sampler_program(program));
      },
      py::arg("program"), py::arg("origin"),
      "Checks a sampler program's JSON and registers it under its name (again: the same "
      "entry; a different program under a taken name is refused); returns its entry as "
      "samplers() lists it.");
}

void bind_queue_bytes(py::module_& m) {
  m.def("default_queue_bytes", &loader::default_queue_bytes,
        "The byte bound of the loader's queues when queue_bytes is not given: 1/64 of the "
        "memory available to the process, between 32 and 128 MiB.");
}

void bind_run_digest(py::module_& m) {
  py::class_<sampler::run_digest>(m, "RunDigest",
                                  "Folds minibatch digests, in minibatch order, into the digest "
                                  "`bulkgnn sample` prints.")
      .def(py::init<>())
      .def("add", &sampler::run_digest::add, py::arg("minibatch_digest"))
      .def_property_readonly("value", &sampler::run_digest::value);
}

}  // namespace

void bind_loader(py::module_& m) {
  bind_minibatch(m);
  bind_epoch(m);
  bind_neighbor_loader(m);
  bind_link_neighbor_loader(m);
  bind_run_digest(m);
  bind_sampler_table(m);
  bind_queue_bytes(m);
}

}  // namespace bulkgnn::python
