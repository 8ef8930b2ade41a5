#include "bulkgnn/fullbatch/closed_forms.hpp"

#include <unordered_set>

namespace bulkgnn::fullbatch {

namespace {

// A rank's bytes of a ring all-reduce of `bytes` over `ranks` (as counted).
double ring_bytes(std::int64_t bytes, int ranks) {
  return ranks > 1 ? static_cast<double>(2 * (ranks - 1) * bytes / ranks) : 0.0;
}

}  // namespace

double product_bytes(const grid_layout& layout, std::int64_t vertices, std::int64_t width,
                     std::int64_t boundary_rows) {
  const double p = layout.ranks();
  const double c = layout.replication();
  const double q = layout.side();
  const double matrix = 4.0 * static_cast<double>(vertices) * static_cast<double>(width);
  switch (layout.kind()) {
    case grid_kind::one_d:
      return (p - 1) * matrix;
    case grid_kind::one_and_half_d: {
      const auto team_bytes = 4 * vertices * width * layout.replication() / layout.ranks();
      return (p / c - 1) * matrix + p * ring_bytes(team_bytes, layout.replication());
    }
    case grid_kind::two_d:
      return 2 * (q - 1) * matrix;
    case grid_kind::three_d:
      return 2 * (q - 1) * matrix + 2 * (c - 1) / c * matrix;
    case grid_kind::sar:
      return 4.0 * static_cast<double>(boundary_rows) * static_cast<double>(width);
    case grid_kind::replicated:
    case grid_kind::two_d_summa:
      break;  // not full-batch grids: grid_layout refuses them
  }
  return 0;
}

std::int64_t boundary_rows_of_part(csr_view graph, const distributed::vertex_partition& partition,
                                   int part) {
  std::unordered_set<vertex_t> referenced;
  for (std::int64_t id = partition.part_offsets[part]; id < partition.part_offsets[part + 1];
       ++id) {
    const auto v = partition.old_id.empty() ? static_cast<vertex_t>(id) : partition.old_id[id];
    for (auto e = graph.indptr[v]; e < graph.indptr[v + 1]; ++e)
      if (partition.owner[graph.indices[e]] != part) referenced.insert(graph.indices[e]);
  }
  return static_cast<std::int64_t>(referenced.size());
}

epoch_bytes predicted_epoch_bytes(const grid_layout& layout, std::int64_t vertices,
                                  const trainer::model_config& model, std::int64_t parameters,
                                  std::int64_t boundary_rows) {
  epoch_bytes bytes;
  for (int l = 0; l < model.layers; ++l) {
    const auto width = l == 0 ? model.in_features : model.hidden;
    bytes.forward += product_bytes(layout, vertices, width, boundary_rows);
    if (l > 0) bytes.backward += product_bytes(layout, vertices, width, boundary_rows);
  }
  const int summing = layout.kind() == grid_kind::one_and_half_d
                          ? layout.ranks() / layout.replication()
                          : layout.ranks();
  bytes.gradients = layout.ranks() * ring_bytes(4 * parameters, summing);
  return bytes;
}

}  // namespace bulkgnn::fullbatch
