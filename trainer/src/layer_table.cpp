#include "bulkgnn/trainer/layer_table.hpp"

#include "../layers/layer_entries.hpp"
#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>

#include <array>

namespace bulkgnn::trainer {

std::span<const layer_entry> layer_table() {
  // A new layer kind: its file in trainer/layers/ (declared in
  // layer_entries.hpp, listed in trainer/CMakeLists.txt) and one entry here.
  static const std::array table{layers::sage_layer(), layers::gcn_layer(),
                                layers::graph_conv_layer()};
  return table;
}

const layer_entry& find_layer(layer_kind kind) {
  for (const auto& entry : layer_table())
    if (entry.kind == kind) return entry;
  throw internal_error(
      fmt::format("find_layer: layer kind {} is not registered", static_cast<int>(kind)));
}

const layer_entry& find_layer(std::string_view name, std::string_view option) {
  for (const auto& entry : layer_table())
    if (entry.name == name) return entry;
  throw option_error(
      fmt::format("{}: unknown layer kind '{}' (expected {})", option, name, layer_names()));
}

std::string layer_names() {
  std::string names;
  const auto table = layer_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (i > 0) names += i + 1 == table.size() ? " or " : ", ";
    names += table[i].name;
  }
  return names;
}

}  // namespace bulkgnn::trainer
