#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/trainer/layers.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::fullbatch {

// The aggregation matrix Â of full-batch training, row v aggregating into
// vertex v (row v of the graph holds v's in-neighbours):
//  - gcn: D̃^-1/2 (A+I) D̃^-1/2 as CAGNET and PyG's GCNConv: a self loop added
//    to every row that has none (PyG's add_remaining_self_loops), d̃(v) the
//    row's stored entries after that, Â[v, u] = 1/√(d̃(v)·d̃(u)) per entry;
//  - sage: the mean over the row's stored entries, 1/deg(v) each (PyG's
//    SAGEConv; an empty row aggregates to zero).
// Edge weights of the graph are ignored, as the samplers ignore them.

// d̃(v) for each of `vertices` (old ids): the row's stored entries, plus one
// if none of them is v itself.
[[nodiscard]] std::vector<std::int64_t> degrees_with_self_loops(csr_view graph,
                                                                std::span<const vertex_t> vertices);

// Rows `vertices` (old ids) of Â, in that order, with columns as the
// partition's new ids, sorted within each row, weighted as the layer's
// entry says for full-batch training (layer_entry::full_batch). The symmetric
// weights read d̃ of every column from `degrees_by_new_id` (all n of them);
// the mean reads nothing from it.
[[nodiscard]] csr_matrix normalised_rows(csr_view graph, std::span<const vertex_t> vertices,
                                         const distributed::vertex_partition& partition,
                                         trainer::layer_kind kind,
                                         std::span<const std::int64_t> degrees_by_new_id);

}  // namespace bulkgnn::fullbatch
