#pragma once

#include <filesystem>
#include <optional>

namespace bulkgnn::data {

struct ogb_import_options {
  // Add the reverse of every edge. Unset: follow meta.json's
  // "add_inverse_edge" when present, else false. The manifest records the
  // choice ("add_inverse_edge") and where it came from
  // ("add_inverse_edge_from": "option", "meta.json" or "default").
  std::optional<bool> add_inverse_edges;
  bool quiet = false;  // no progress display
  // Column k of the edge features (raw/edge-feat.csv.gz, or edge_feat of
  // raw/data.npz) becomes the edge weight (edge_weight.npy); unset: none.
  std::optional<int> edge_weight_column;
};

// Converts an OGB node-property raw directory (raw/edge.csv.gz,
// raw/num-node-list.csv.gz, optional raw/num-edge-list.csv.gz,
// raw/node-feat.csv.gz, raw/node-label.csv.gz, split/NAME/{train,valid,test}.csv.gz)
// into a native dataset at out_dir. Where raw/edge.csv.gz is absent, the
// binary layout OGB ships its largest graphs in is read instead: raw/data.npz
// (edge_index 2 × E, num_nodes_list, optional node_feat n × f of any float
// type, optional edge_feat E × k) and raw/node-label.npz (node_label, NaN for
// unlabelled), each array streamed in chunks. Streams every file (memory stays bounded
// by the output arrays, which are memory-mapped files), and throws data_error
// naming the file and line of the first malformed input.
void import_ogb(const std::filesystem::path& ogb_dir, const std::filesystem::path& out_dir,
                const ogb_import_options& options = {});

}  // namespace bulkgnn::data
