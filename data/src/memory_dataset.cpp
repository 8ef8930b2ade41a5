#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "native_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <utility>

namespace bulkgnn::data {

namespace {

// Errors about arrays in memory name them as the validator does.
std::string in_memory(const char* array) { return fmt::format("{} (in memory)", array); }

// An edge list's endpoints in [0, n), the two lists of one length, the
// weights one per edge; data_error naming the edge otherwise.
void check_edge_list(const memory_arrays& a, std::int64_t n) {
  if (a.source.size() != a.target.size())
    throw data_error(in_memory("edge_index"),
                     fmt::format("{} sources but {} targets", a.source.size(), a.target.size()));
  if (!a.edge_weight.empty() && a.edge_weight.size() != a.source.size())
    throw data_error(in_memory("edge_weight"),
                     fmt::format("{} weights for {} edges", a.edge_weight.size(), a.source.size()));
  const auto outside = [n](std::int64_t v) { return v < 0 || v >= n; };
  const auto bad = detail::first_where(std::ssize(a.source), [&](std::int64_t e) {
    return outside(a.source[e]) || outside(a.target[e]);
  });
  if (bad != std::ssize(a.source))
    throw data_error(in_memory("edge_index"),
                     fmt::format("edge {} ({} -> {}) has a node outside [0, {})", bad,
                                 a.source[bad], a.target[bad], n));
}

// True when the list is already in CSR order (by target, then source) and
// has no inverses to add: then each edge's number is its CSR position.
bool in_csr_order(const memory_arrays& a) {
  if (a.add_inverse_edges) return false;
  for (std::size_t e = 1; e < a.source.size(); ++e)
    if (std::pair(a.target[e], a.source[e]) < std::pair(a.target[e - 1], a.source[e - 1]))
      return false;
  return true;
}

// CSR of an edge list: edge (s, t) puts s into row t (and t into row s with
// the inverse edges), rows sorted, weights and edge numbers travelling with
// their columns (repeats of an entry keep the list's order).
struct edge_list_csr {
  csr_matrix graph;
  // One per entry; empty for a list in CSR order, where an entry's number is
  // its position (PyG's edge_index sorted by destination, then source: 8
  // bytes an edge saved, at build and after).
  std::vector<std::int64_t> edge_numbers;
};

edge_list_csr csr_of_edge_list(const memory_arrays& a, std::int64_t n) {
  check_edge_list(a, n);
  const bool numbered_by_position = in_csr_order(a);
  const auto edges = static_cast<edge_t>(a.source.size());
  const edge_t stored = a.add_inverse_edges ? 2 * edges : edges;
  csr_matrix m;
  m.rows = m.cols = n;
  m.indptr = buffer<edge_t>(static_cast<std::size_t>(n) + 1, 0);
  const std::span<edge_t> indptr(m.indptr.data(), m.indptr.size());
  for (edge_t e = 0; e < edges; ++e) {
    ++indptr[a.target[e] + 1];
    if (a.add_inverse_edges) ++indptr[a.source[e] + 1];
  }
  std::partial_sum(indptr.begin(), indptr.end(), indptr.begin());
  m.indices = buffer<vertex_t>(static_cast<std::size_t>(stored));
  if (!a.edge_weight.empty()) m.values = buffer<float>(static_cast<std::size_t>(stored));
  std::vector<std::int64_t> numbers(numbered_by_position ? 0 : static_cast<std::size_t>(stored));
  // cursor[v]: where row v's next entry goes.
  std::vector<edge_t> cursor(indptr.begin(), indptr.end() - 1);
  const auto place = [&](std::int64_t row, std::int64_t column, edge_t e) {
    const edge_t at = cursor[static_cast<std::size_t>(row)]++;
    m.indices[static_cast<std::size_t>(at)] = static_cast<vertex_t>(column);
    if (!numbered_by_position) numbers[static_cast<std::size_t>(at)] = e;
    if (!a.edge_weight.empty())
      m.values[static_cast<std::size_t>(at)] = a.edge_weight[static_cast<std::size_t>(e)];
  };
  for (edge_t e = 0; e < edges; ++e) {
    place(a.target[e], a.source[e], e);
    if (a.add_inverse_edges) place(a.source[e], a.target[e], e);
  }
  if (!numbered_by_position)
    detail::sort_rows(indptr, std::span<vertex_t>(m.indices.data(), m.indices.size()),
                      std::span<float>(m.values.data(), m.values.size()), numbers);
  return {std::move(m), std::move(numbers)};
}

std::int64_t node_count(const memory_arrays& a) {
  if (a.num_nodes >= 0) return a.num_nodes;
  if (a.features.rows > 0) return a.features.rows;
  if (!a.labels.empty()) return std::ssize(a.labels);
  if (!a.indptr.empty()) return std::ssize(a.indptr) - 1;
  throw data_error(in_memory("edge_index"),
                   "the node count cannot be inferred from an edge list alone: give num_nodes, "
                   "features or labels");
}

// CSR given in memory: a row pointer of n + 1 offsets from 0 to the entries,
// one weight per entry; validate() checks the rest.
void check_csr_sizes(const memory_arrays& a, std::int64_t n) {
  if (std::ssize(a.indptr) != n + 1)
    throw data_error(
        in_memory("indptr"),
        fmt::format("holds {} offsets, expected num_nodes + 1 = {}", a.indptr.size(), n + 1));
  if (a.indptr.front() != 0 || a.indptr.back() != std::ssize(a.indices))
    throw data_error(in_memory("indptr"),
                     fmt::format("starts at {} and ends at {}, expected 0 and the {} indices",
                                 a.indptr.front(), a.indptr.back(), a.indices.size()));
  if (!a.edge_weight.empty() && a.edge_weight.size() != a.indices.size())
    throw data_error(in_memory("edge_weight"), fmt::format("{} weights for {} entries",
                                                           a.edge_weight.size(), a.indices.size()));
}

// 1 + the largest label where num_classes is not given.
int class_count(const memory_arrays& a) {
  if (a.num_classes > 0 || a.labels.empty()) return a.num_classes;
  const std::int64_t largest = *std::max_element(a.labels.begin(), a.labels.end());
  if (largest >= std::numeric_limits<std::int32_t>::max())
    throw data_error(in_memory("labels"), fmt::format("label {} is too large", largest));
  return static_cast<int>(largest + 1);
}

}  // namespace

dataset dataset::from_memory(memory_arrays a) {
  const bool edge_list = a.edge_list;
  BULKGNN_EXPECTS(edge_list ? a.indptr.empty() && a.indices.empty()
                            : !a.indptr.empty() && a.source.empty() && a.target.empty(),
                  "memory_arrays: give the graph as CSR (indptr, indices) or, with edge_list "
                  "set, as an edge list (source, target); not both");
  BULKGNN_EXPECTS(!a.add_inverse_edges || edge_list,
                  "memory_arrays.add_inverse_edges applies to an edge list; CSR is taken as it is");
  const std::int64_t n = node_count(a);
  if (n > std::numeric_limits<vertex_t>::max())
    throw data_error(in_memory("graph"),
                     fmt::format("{} nodes exceed the 32-bit vertex id range", n));
  if (a.features.rows > 0 && a.features.rows != n)
    throw data_error(in_memory("features"),
                     fmt::format("has {} rows for {} nodes", a.features.rows, n));
  if (std::ssize(a.features.data) != a.features.rows * a.features.cols)
    throw data_error(in_memory("features"),
                     fmt::format("holds {} values for {} x {}", a.features.data.size(),
                                 a.features.rows, a.features.cols));
  if (!a.labels.empty() && std::ssize(a.labels) != n)
    throw data_error(in_memory("labels"),
                     fmt::format("has {} entries for {} nodes", a.labels.size(), n));
  std::set<std::string> names;
  for (const auto& s : a.splits)
    if (!names.insert(s.name).second)
      throw data_error(in_memory("splits"), fmt::format("split '{}' is given twice", s.name));

  dataset d;
  d.name_ = a.name;
  d.memory_owner_ = std::move(a.owner);
  if (edge_list) {
    auto built = csr_of_edge_list(a, n);
    d.built_graph_ = std::make_shared<const csr_matrix>(std::move(built.graph));
    if (!built.edge_numbers.empty())
      d.edge_numbers_ =
          std::make_shared<const std::vector<std::int64_t>>(std::move(built.edge_numbers));
    d.graph_ = d.built_graph_->view();
  } else {
    check_csr_sizes(a, n);
    d.graph_ = csr_view{n, n, a.indptr, a.indices, a.edge_weight};
  }
  if (a.features.rows > 0) d.features_ = a.features;
  d.labels_ = a.labels;
  d.num_classes_ = class_count(a);
  d.splits_ = std::move(a.splits);
  d.manifest_ = {{"format", "bulkgnn-memory"},
                 {"name", d.name_},
                 {"num_nodes", n},
                 {"num_edges", d.graph_.nnz()},
                 {"num_features", d.features_.cols},
                 {"num_classes", d.num_classes_},
                 {"add_inverse_edges", a.add_inverse_edges}};
  d.validate();
  return d;
}

}  // namespace bulkgnn::data
