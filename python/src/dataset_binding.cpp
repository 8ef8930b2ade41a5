#include "bindings.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/default_dataset.hpp"
#include "bulkgnn/data/link_split.hpp"
#include "bulkgnn/kernels/walks.hpp"
#include "bulkgnn/trainer/link_metrics.hpp"

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace bulkgnn::python {

namespace {

// pybind11 holders cannot be shared_ptr<const T>; nothing here mutates one.
using dataset_ptr = std::shared_ptr<data::dataset>;

// A read-only numpy view of memory the dataset maps; `keeper` (the Python
// Dataset) stays alive as long as the view does.
template <class T>
py::array view(std::span<const T> values, std::vector<py::ssize_t> shape,
               const py::object& keeper) {
  py::array array(py::dtype::of<T>(), std::move(shape), values.data(), keeper);
  py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return array;
}

template <class T>
py::object view_or_none(std::span<const T> values, std::vector<py::ssize_t> shape,
                        const py::object& keeper) {
  if (values.empty()) return py::none();
  return view(values, std::move(shape), keeper);
}

// A numpy array that owns `values` (moved, not copied).
template <class T>
py::array owned_array(std::vector<T> values) {
  auto* owner = new std::vector<T>(std::move(values));
  const py::capsule release(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(owner->size()), owner->data(), release);
}

py::tuple split_views(const data::split& s, const py::object& keeper) {
  const auto ids = [&](std::span<const vertex_t> v) {
    return view(v, {static_cast<py::ssize_t>(v.size())}, keeper);
  };
  return py::make_tuple(ids(s.train), ids(s.valid), ids(s.test));
}

dataset_ptr open(const std::optional<std::filesystem::path>& path,
                 std::optional<bool> add_inverse_edges) {
  if (!path && add_inverse_edges)
    throw option_error(
        "ogb_import_options.add_inverse_edges applies to an OGB raw directory; the embedded "
        "default has none");
  // The import's choice concerns an OGB raw directory only: a native one was
  // converted with its edges as they are.
  const bool ogb_raw = path && !std::filesystem::exists(*path / "manifest.json");
  data::ogb_import_options ogb;
  ogb.add_inverse_edges = add_inverse_edges;
  dataset_ptr opened;
  {
    const py::gil_scoped_release unlocked;
    opened = std::make_shared<data::dataset>(path ? data::dataset::open(*path, ogb)
                                                  : data::open_default_dataset(false));
  }
  // An OGB download's meta.json need not say whether the graph is
  // undirected; reading it as directed loses the reverse edges silently.
  const auto& manifest = opened->manifest();
  if (ogb_raw && manifest.value("add_inverse_edge_from", "") == "default")
    py::module_::import("warnings")
        .attr("warn")(
            std::string(path->string()) +
                ": meta.json does not say whether the graph is undirected (\"add_inverse_edge\"), "
                "so its edges were read as directed; pass add_inverse_edges=True to add their "
                "reverses (or False to silence this)",
            py::module_::import("builtins").attr("UserWarning"), 1);
  return opened;
}

// A span over a numpy array's elements (empty for None). The arrays come
// from bulkgnn._data, which hands over C-contiguous arrays of these dtypes.
template <class T>
std::span<const T> elements(const std::optional<py::array_t<T, py::array::c_style>>& array) {
  if (!array) return {};
  return {array->data(), static_cast<std::size_t>(array->size())};
}

// Python objects that an in-memory dataset views; the last reference may go
// on any thread, so the deleter takes the GIL (and leaks them once the
// interpreter is gone, when nothing can free them).
std::shared_ptr<const void> python_owner(py::object keep) {
  return {new py::object(std::move(keep)), [](const void* p) {
            auto* object = static_cast<py::object*>(const_cast<void*>(p));
            if (!Py_IsInitialized()) return;
            const py::gil_scoped_acquire locked;
            delete object;
          }};
}

using ids = std::optional<py::array_t<vertex_t, py::array::c_style>>;

dataset_ptr from_arrays(const std::string& name, std::int64_t num_nodes,
                        const std::optional<py::array_t<edge_t, py::array::c_style>>& indptr,
                        const ids& indices,
                        const std::optional<py::array_t<std::int64_t, py::array::c_style>>& source,
                        const std::optional<py::array_t<std::int64_t, py::array::c_style>>& target,
                        bool add_inverse_edges,
                        const std::optional<py::array_t<float, py::array::c_style>>& edge_weight,
                        const std::optional<py::array_t<float, py::array::c_style>>& features,
                        const std::optional<py::array_t<std::int32_t, py::array::c_style>>& labels,
                        int num_classes,
                        const std::vector<std::tuple<std::string, ids, ids, ids>>& splits) {
  data::memory_arrays a;
  a.name = name;
  a.num_nodes = num_nodes;
  a.indptr = elements(indptr);
  a.indices = elements(indices);
  a.edge_list = source.has_value();
  a.source = elements(source);
  a.target = elements(target);
  a.add_inverse_edges = add_inverse_edges;
  a.edge_weight = elements(edge_weight);
  if (features) {
    if (features->ndim() != 2)
      throw option_error(
          fmt::format("features must be two-dimensional, got {} dimensions", features->ndim()));
    a.features = {features->shape(0), features->shape(1), elements(features)};
  }
  a.labels = elements(labels);
  a.num_classes = num_classes;
  py::list keep;
  for (const auto& array : {py::cast(indptr), py::cast(indices), py::cast(source), py::cast(target),
                            py::cast(edge_weight), py::cast(features), py::cast(labels)})
    keep.append(array);
  for (const auto& [split_name, train, valid, test] : splits) {
    a.splits.push_back({split_name, elements(train), elements(valid), elements(test)});
    keep.append(py::make_tuple(train, valid, test));
  }
  a.owner = python_owner(std::move(keep));
  const py::gil_scoped_release unlocked;
  return std::make_shared<data::dataset>(data::dataset::from_memory(std::move(a)));
}

}  // namespace

// Edges as a 2 x E int64 array (source row 0), as PyG holds them.
py::array edge_index_of(const data::edge_arrays& e) {
  std::vector<std::int64_t> index(e.source.begin(), e.source.end());
  index.insert(index.end(), e.target.begin(), e.target.end());
  auto flat = owned_array(std::move(index));
  return flat.attr("reshape")(2, e.size());
}

namespace {

// Each positive's own negative targets as a P x K int64 array (none: 0 x 0).
py::array targets_array(const data::negative_targets& t) {
  std::vector<std::int64_t> values(t.targets.begin(), t.targets.end());
  const auto per = t.per_positive;
  const auto rows = per == 0 ? 0 : static_cast<std::int64_t>(values.size()) / per;
  return owned_array(std::move(values)).attr("reshape")(rows, per);
}

py::dict dict_of(data::link_split& split) {
  const auto graph = [](csr_matrix& g) {
    return py::make_tuple(owned_array(std::vector<edge_t>(g.indptr.begin(), g.indptr.end())),
                          owned_array(std::vector<vertex_t>(g.indices.begin(), g.indices.end())));
  };
  return py::dict(
      py::arg("undirected") = split.undirected, py::arg("train") = edge_index_of(split.train),
      py::arg("valid") = edge_index_of(split.valid), py::arg("test") = edge_index_of(split.test),
      py::arg("valid_negatives") = edge_index_of(split.valid_negatives),
      py::arg("test_negatives") = edge_index_of(split.test_negatives),
      py::arg("valid_negative_targets") = targets_array(split.valid_negative_targets),
      py::arg("test_negative_targets") = targets_array(split.test_negative_targets),
      py::arg("train_graph") = graph(split.train_graph),
      py::arg("test_graph") = graph(split.test_graph));
}

using edge_index_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// split[key] as a row-major array of vertex ids (2 x E edge indices, or
// P x K targets), each checked to fit int32: ValueError naming the key and
// entry otherwise.
std::vector<vertex_t> ids_from(const edge_index_array& array, const char* key) {
  std::vector<vertex_t> ids;
  ids.reserve(static_cast<std::size_t>(array.size()));
  for (py::ssize_t i = 0; i < array.shape(0); ++i)
    for (py::ssize_t k = 0; k < array.shape(1); ++k) {
      const auto v = array.at(i, k);
      BULKGNN_EXPECTS(v >= 0 && v < (std::int64_t{1} << 31),
                      "save_link_split: split['{}'][{}, {}] is {}, outside int32 ids", key, i, k,
                      v);
      ids.push_back(static_cast<vertex_t>(v));
    }
  return ids;
}

// split[key] as edges: 2 x E edge indices (absent and optional: none).
data::edge_arrays edges_from(const py::dict& split, const char* key, bool required) {
  if (!split.contains(key)) {
    BULKGNN_EXPECTS(!required, "save_link_split: split has no '{}' (2 x E edge indices)", key);
    return {};
  }
  const auto index = edge_index_array::ensure(split[key]);
  BULKGNN_EXPECTS(index && index.ndim() == 2 && index.shape(0) == 2,
                  "save_link_split: split['{}'] must be 2 x E edge indices", key);
  auto ids = ids_from(index, key);
  const auto count = static_cast<std::ptrdiff_t>(index.shape(1));
  return {.source = {ids.begin(), ids.begin() + count}, .target = {ids.begin() + count, ids.end()}};
}

// split[key] as each positive's own negative targets: a P x K array of ids
// (absent: none).
data::negative_targets targets_from(const py::dict& split, const char* key) {
  if (!split.contains(key)) return {};
  const auto array = edge_index_array::ensure(split[key]);
  BULKGNN_EXPECTS(array && array.ndim() == 2,
                  "save_link_split: split['{}'] must be positives x targets", key);
  return {.targets = ids_from(array, key),
          .per_positive = array.shape(0) == 0 ? 0 : static_cast<std::int64_t>(array.shape(1))};
}

void save_link_split_of(const std::filesystem::path& path, const py::dict& split,
                        const data::dataset& d) {
  data::link_split stored;
  stored.train = edges_from(split, "train", true);
  stored.valid = edges_from(split, "valid", true);
  stored.test = edges_from(split, "test", true);
  stored.valid_negatives = edges_from(split, "valid_negatives", false);
  stored.test_negatives = edges_from(split, "test_negatives", false);
  stored.valid_negative_targets = targets_from(split, "valid_negative_targets");
  stored.test_negative_targets = targets_from(split, "test_negative_targets");
  const py::gil_scoped_release unlocked;
  data::write_link_split(path, stored, d.graph());
}

py::dict load_link_split_of(const std::filesystem::path& path, const data::dataset& d) {
  data::link_split split;
  {
    const py::gil_scoped_release unlocked;
    split = data::read_link_split(path, d.graph());
  }
  return dict_of(split);
}

}  // namespace

py::dict link_split_of(const data::dataset& d, double valid_fraction, double test_fraction,
                       double negatives_per_positive, std::uint32_t seed) {
  data::link_split split;
  {
    const py::gil_scoped_release unlocked;
    split = data::random_link_split(d.graph(), {.valid_fraction = valid_fraction,
                                                .test_fraction = test_fraction,
                                                .negatives_per_positive = negatives_per_positive,
                                                .seed = seed});
  }
  return dict_of(split);
}

void bind_link_split(py::module_& m) {
  m.def("random_link_split", &link_split_of, py::arg("dataset"), py::kw_only(),
        py::arg("valid_fraction") = 0.1, py::arg("test_fraction") = 0.2,
        py::arg("negatives_per_positive") = 1.0, py::arg("seed") = 0,
        "A random split of the dataset's edges for link prediction, as PyG's RandomLinkSplit "
        "makes it: a dict of 2 x E int64 edge indices (train, valid, test, and fixed "
        "valid_negatives and test_negatives that are no edge of the graph), whether the graph "
        "is undirected (then each edge is split once, smaller endpoint first), and the "
        "message-passing graphs as (indptr, indices): train_graph (the training edges) and "
        "test_graph (training and valid edges), both directions where undirected.");
  m.def("save_link_split", &save_link_split_of, py::arg("path"), py::arg("split"),
        py::arg("dataset"),
        "Stores a link split for `dataset` as a directory at `path` (written whole, then "
        "renamed into place), which `bulkgnn train DATA --task link --link-split-dir PATH` and "
        "load_link_split read: split is a dict of 2 x E edge indices 'train', 'valid' and "
        "'test' and optionally 'valid_negatives' and 'test_negatives', as random_link_split "
        "and ogb_link_split give them, and optionally 'valid_negative_targets' and "
        "'test_negative_targets' (P x K: each held-out positive's own negative targets, "
        "ogbl-citation2's, which MRR and Hits@K then rank against); other keys, such as "
        "ogbl-collab's per-edge 'train_year', are not stored. Refused, naming the part and "
        "edge: an id outside the graph, a loop among the positives, a training edge that is no "
        "edge of the graph, a held-out edge that messages pass over, targets not K per "
        "positive; and a path holding anything but a link split.");
  m.def("load_link_split", &load_link_split_of, py::arg("path"), py::arg("dataset"),
        "The link split stored at `path` (save_link_split, `bulkgnn split-links`) for "
        "`dataset`, as random_link_split lays one out (message-passing graphs included).");
}

using score_array = py::array_t<float, py::array::c_style | py::array::forcecast>;

std::span<const float> scores_of(const score_array& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

double mean_reciprocal_rank_of(const score_array& positive, const score_array& negative) {
  BULKGNN_EXPECTS(positive.ndim() == 1, "mean_reciprocal_rank: y_pred_pos must be 1-D, not {}-D",
                  positive.ndim());
  BULKGNN_EXPECTS(negative.ndim() == 2 && negative.shape(0) == positive.shape(0),
                  "mean_reciprocal_rank: y_pred_neg must be {} x (negatives per positive), "
                  "one row per positive",
                  positive.shape(0));
  const py::gil_scoped_release unlocked;
  return trainer::mean_reciprocal_rank(scores_of(positive), scores_of(negative));
}

// OGB's link-prediction metrics, as `bulkgnn train --task link` reports them.
void bind_link_metrics(py::module_& m) {
  m.def(
      "hits_at_k",
      [](const score_array& positive, const score_array& negative, std::int64_t k) {
        const py::gil_scoped_release unlocked;
        return trainer::hits_at_k(scores_of(positive), scores_of(negative), k);
      },
      py::arg("y_pred_pos"), py::arg("y_pred_neg"), py::arg("k"),
      "OGB's Hits@K (ogb.linkproppred.Evaluator for ogbl-collab, -ddi, -ppa): the share of "
      "positive scores strictly above the K-th highest of one pool of negative scores; 1.0 "
      "with fewer than K negatives.");
  m.def("mean_reciprocal_rank", &mean_reciprocal_rank_of, py::arg("y_pred_pos"),
        py::arg("y_pred_neg"),
        "OGB's MRR (ogbl-citation2): positive i ranked against row i of y_pred_neg, its rank "
        "1 + (negatives above + negatives at least as high) / 2; the mean of 1 / rank.");
}

using id_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// Walks as a len(start) x (walk_length + 1) int64 array, as PyG's
// torch_cluster.random_walk returns them.
py::array_t<std::int64_t> node2vec_walks_of(const dataset_ptr& d, const py::array& given,
                                            std::int64_t walk_length, double p, double q,
                                            std::uint32_t seed, std::uint32_t epoch) {
  // Integer ids only: a cast would truncate 1.7 to 1 and read a mask as ids.
  BULKGNN_EXPECTS(given.dtype().kind() == 'i' || given.dtype().kind() == 'u',
                  "node2vec_walks: start must hold integer vertex ids, got dtype {}",
                  std::string(py::str(given.dtype())));
  const auto start = id_array::ensure(given);
  BULKGNN_EXPECTS(start.ndim() == 1, "node2vec_walks: start must be 1-D, not {}-D", start.ndim());
  std::vector<vertex_t> starts(static_cast<std::size_t>(start.size()));
  const auto* ids = start.data();
  for (std::size_t i = 0; i < starts.size(); ++i) {
    BULKGNN_EXPECTS(ids[i] >= 0 && ids[i] < d->num_nodes(),
                    "node2vec_walks: start[{}] = {} is not a vertex of the graph's {}", i, ids[i],
                    d->num_nodes());
    starts[i] = static_cast<vertex_t>(ids[i]);
  }
  buffer<vertex_t> walks;
  {
    const py::gil_scoped_release unlocked;
    walks = kernels::node2vec_walks(
        executor{}, d->graph(), starts,
        {.length = walk_length, .p = p, .q = q, .seed = seed, .epoch = epoch});
  }
  py::array_t<std::int64_t> out(
      {static_cast<py::ssize_t>(starts.size()), static_cast<py::ssize_t>(walk_length + 1)});
  std::copy(walks.begin(), walks.end(), out.mutable_data());
  return out;
}

// node2vec's walks, for an embedding trainer (PyG's Node2Vec, DeepWalk).
void bind_walks(py::module_& m) {
  m.def("node2vec_walks", &node2vec_walks_of, py::arg("dataset"), py::arg("start"),
        py::arg("walk_length"), py::kw_only(), py::arg("p") = 1.0, py::arg("q") = 1.0,
        py::arg("seed") = 0, py::arg("epoch") = 0,
        "node2vec's second-order random walks (p = q = 1: DeepWalk's) from each vertex of "
        "`start`, as a len(start) x (walk_length + 1) int64 array: the first step uniform "
        "over the vertex's neighbours; from v, having come from t, neighbour x weighted 1/p "
        "if x is t, 1 if x neighbours t, 1/q otherwise; a vertex without neighbours "
        "repeated to the end, as torch_cluster's random_walk does. The same seed and epoch "
        "give the same walks for any thread count.");
}

void bind_dataset(py::module_& m) {
  py::class_<data::dataset, dataset_ptr>(m, "Dataset",
                                         "A graph with node features, labels and splits, "
                                         "memory-mapped; its arrays are read-only numpy views.")
      .def(py::init(&open), py::arg("path") = py::none(), py::kw_only(),
           py::arg("add_inverse_edges") = py::none(),
           "Opens a native dataset directory or an OGB raw directory (imported on the fly; "
           "add_inverse_edges adds the reverse of every edge, None follows its meta.json, "
           "warning where that does not say); with no path, generates the embedded default "
           "(CSBM, 100,000 vertices, 64 features, 8 classes).")
      .def_static("_from_arrays", &from_arrays, py::kw_only(), py::arg("name"),
                  py::arg("num_nodes"), py::arg("indptr"), py::arg("indices"), py::arg("source"),
                  py::arg("target"), py::arg("add_inverse_edges"), py::arg("edge_weight"),
                  py::arg("features"), py::arg("labels"), py::arg("num_classes"), py::arg("splits"),
                  "A dataset over arrays in memory (see bulkgnn.Dataset.from_arrays, which "
                  "prepares them).")
      .def_property_readonly("name", &data::dataset::name)
      .def_property_readonly("num_nodes", &data::dataset::num_nodes)
      .def_property_readonly("num_edges", &data::dataset::num_edges)
      .def_property_readonly("num_features",
                             [](const data::dataset& d) { return d.features().cols; })
      .def_property_readonly("num_classes", &data::dataset::num_classes)
      .def_property_readonly("indptr",
                             [](const py::object& self) {
                               const auto g = self.cast<const data::dataset&>().graph();
                               return view(g.indptr, {g.rows + 1}, self);
                             })
      .def_property_readonly("indices",
                             [](const py::object& self) {
                               const auto g = self.cast<const data::dataset&>().graph();
                               return view(g.indices, {static_cast<py::ssize_t>(g.nnz())}, self);
                             })
      .def_property_readonly(
          "edge_weight",
          [](const py::object& self) {
            const auto g = self.cast<const data::dataset&>().graph();
            return view_or_none(g.values, {static_cast<py::ssize_t>(g.nnz())}, self);
          },
          "One weight per entry of indices, or None.")
      .def_property_readonly(
          "features",
          [](const py::object& self) {
            const auto f = self.cast<const data::dataset&>().features();
            return view_or_none(f.data, {f.rows, f.cols}, self);
          },
          "num_nodes x num_features float32, or None.")
      .def_property_readonly(
          "labels",
          [](const py::object& self) {
            const auto l = self.cast<const data::dataset&>().labels();
            return view_or_none(l, {static_cast<py::ssize_t>(l.size())}, self);
          },
          "int32 per node, -1 = unlabelled, or None.")
      .def_property_readonly("splits",
                             [](const data::dataset& d) {
                               std::vector<std::string> names;
                               for (const auto& s : d.splits()) names.push_back(s.name);
                               return names;
                             })
      .def(
          "split",
          [](const py::object& self, const std::string& name) {
            return split_views(self.cast<const data::dataset&>().find_split(name), self);
          },
          py::arg("name") = "",
          "(train, valid, test) node ids of the named split (the first if no name).")
      .def(
          "training_vertices",
          [](const data::dataset& d, const std::string& split) {
            return owned_array(d.training_vertices(split));
          },
          py::arg("split") = "",
          "The seeds `bulkgnn sample` and `train` use: the split's training vertices, or every "
          "vertex of a dataset without splits.")
      .def("__repr__", [](const data::dataset& d) {
        return py::str("bulkgnn.Dataset(name={!r}, num_nodes={}, num_edges={}, num_features={})")
            .format(d.name(), d.num_nodes(), d.num_edges(), d.features().cols);
      });
  bind_link_split(m);
  bind_link_metrics(m);
  bind_walks(m);
}

}  // namespace bulkgnn::python
