// The registry of samplers: one line per sampler, each in a folder of its own.
#include "bulkgnn/sampler/sampler_table.hpp"

#include "../cluster/cluster_gcn_sampling.hpp"
#include "../labor/labor_sampling.hpp"
#include "../layer_wise/layer_wise_sampling.hpp"
#include "../node_wise/node_wise_sampling.hpp"
#include "../random_walk/pinsage_sampling.hpp"
#include "../random_walk/random_walk_sampling.hpp"
#include "../saint/saint_sampling.hpp"
#include "../shadow/shadow_sampling.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/sampler_program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace bulkgnn::sampler {

const std::vector<sampler_entry>& sampler_table() {
  static const std::vector<sampler_entry> table{
      node_wise_entry(), ladies_entry(),           fastgcn_entry(),    random_walk_entry(),
      labor_entry(),     labor_importance_entry(), shadow_entry(),     cluster_gcn_entry(),
      pinsage_entry(),   saint_node_entry(),       saint_edge_entry(), saint_rw_entry(),
  };
  return table;
}

const sampler_entry& find_sampler(std::string_view name) {
  for (const auto& entry : sampler_table())
    if (entry.name == name || std::ranges::find(entry.aliases, name) != entry.aliases.end())
      return entry;
  for (const auto* entry : registered_programs())
    if (entry->name == name) return *entry;
  throw option_error(fmt::format("sampler_options.kind must be one of {}; got '{}'",
                                 fmt::join(sampler_names(), ", "), name));
}

std::vector<std::string> sampler_names() {
  std::vector<std::string> names;
  for (const auto& entry : sampler_table()) names.emplace_back(entry.name);
  for (const auto* entry : registered_programs()) names.emplace_back(entry->name);
  return names;
}

std::vector<sampler_parameter> all_sampler_parameters() {
  std::vector<sampler_parameter> all;
  for (const auto& entry : sampler_table())
    for (const auto& p : entry.parameters)
      if (std::ranges::none_of(all, [&](const auto& q) { return q.name == p.name; }))
        all.push_back(p);
  return all;
}

namespace {

std::vector<std::string_view> samplers_keeping_batching() {
  std::vector<std::string_view> names;
  for (const auto& entry : sampler_table())
    if (entry.keeps_batching) names.push_back(entry.name);
  return names;
}

}  // namespace

void validate(const sampler_options& options, bool graph_weighted) {
  const sampler_entry& entry = find_sampler(options.kind);
  BULKGNN_EXPECTS(!options.fanouts.empty(), "sampler_options.fanouts must list at least one hop");
  for (std::size_t h = 0; h < options.fanouts.size(); ++h)
    BULKGNN_EXPECTS(
        (options.fanouts[h] > 0 && options.fanouts[h] <= (1 << 24)) || options.fanouts[h] == -1,
        "sampler_options.fanouts: hop {} has fanout {}; use a count in [1, 2^24] or -1 for all", h,
        options.fanouts[h]);
  BULKGNN_EXPECTS(options.fanouts.size() < 0xFFFFu, "sampler_options.fanouts: too many hops");
  BULKGNN_EXPECTS(options.layers >= 0 && options.layers < 0xFFFF,
                  "sampler_options.layers must be in [0, 65535) (0: one per hop); got {}",
                  options.layers);
  BULKGNN_EXPECTS(entry.any_depth || options.layers == 0 ||
                      options.layers == static_cast<std::int64_t>(options.fanouts.size()),
                  "sampler_options.layers {}: the {} sampler makes one block per hop, and "
                  "sampler_options.fanouts has {}; give one fanout per layer",
                  options.layers, entry.name, options.fanouts.size());
  BULKGNN_EXPECTS(entry.takes_replacement || options.replacement == kernels::replacement::without,
                  "sampler_options.replacement does not apply to the {} sampler", entry.name);
  BULKGNN_EXPECTS(entry.takes_weights || !options.weighted,
                  "sampler_options.weighted does not apply to the {} sampler", entry.name);
  BULKGNN_EXPECTS(!options.weighted || graph_weighted,
                  "sampler_options.weighted needs edge weights, and this graph has none");
  BULKGNN_EXPECTS(entry.keeps_batching || options.cache_dir.empty(),
                  "sampler_options.cache_dir does not apply to the {} sampler, which prepares "
                  "nothing from the whole graph to keep (it applies to {})",
                  entry.name, fmt::join(samplers_keeping_batching(), ", "));
  for (const auto& [name, value] : options.parameters) {
    const auto p = std::ranges::find(entry.parameters, name, &sampler_parameter::name);
    BULKGNN_EXPECTS(p != entry.parameters.end(),
                    "sampler_options: the {} sampler has no parameter {}", entry.name, name);
    BULKGNN_EXPECTS(value >= p->min && value <= p->max,
                    "sampler_options: the {} sampler's parameter {} must be in [{}, {}], got {}",
                    entry.name, name, p->min, p->max, value);
  }
  if (entry.check != nullptr) entry.check(options);
}

std::int64_t block_count(const sampler_options& options) {
  return options.layers != 0 ? options.layers : static_cast<std::int64_t>(options.fanouts.size());
}

std::int64_t parameter(const sampler_options& options, std::string_view name) {
  if (const auto given = options.parameters.find(name); given != options.parameters.end())
    return given->second;
  const sampler_entry& entry = find_sampler(options.kind);
  const auto p = std::ranges::find(entry.parameters, name, &sampler_parameter::name);
  BULKGNN_EXPECTS(p != entry.parameters.end(), "parameter: the {} sampler has no parameter {}",
                  entry.name, name);
  return p->default_value;
}

}  // namespace bulkgnn::sampler
