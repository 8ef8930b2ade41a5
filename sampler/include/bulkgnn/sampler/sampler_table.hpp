#pragma once

#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/sampling_algorithm.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::sampler {

// What a fanout counts.
enum class fanout_unit {
  per_destination,  // drawn per frontier vertex (node-wise); -1 takes every neighbour
  per_minibatch,    // vertices drawn per minibatch and hop (layer-wise)
};

// An integer parameter of one sampler beyond the common options; the CLI
// flag is the name with '-' for '_' (walk_length: --walk-length).
struct sampler_parameter {
  std::string_view name;
  std::string_view help;
  std::int64_t default_value = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// One registered sampler: everything a front end, the trainer and the cost
// model need to know of it, and how to build it. A sampler lives in a folder
// of its own under sampler/ and is registered by one line of
// sampler/src/sampler_table.cpp.
// Fields left out of an entry's designated initialiser take these defaults.
struct sampler_entry {
  std::string_view name = {};
  std::vector<std::string_view> aliases = {};
  std::string_view summary = {};  // one line for --help and Python's docstring
  fanout_unit fanout = fanout_unit::per_destination;
  // The layer its blocks are made for: "sage" (each destination's sampled
  // neighbours, averaged), "gcn" or "graph-conv" (block values are the
  // aggregation weights).
  std::string_view layer = {};
  // Some of its kernels run on the host only: a GPU executor is refused by
  // name before the sampler is made.
  bool host_only = false;
  // Its layers are not its hops: every block is drawn from one subgraph,
  // so sampler_options.layers may ask for any number of them.
  bool any_depth = false;
  // Its minibatches are subgraphs, not batches of batch_size seeds: how an
  // epoch is cut (Cluster-GCN's METIS clusters, GraphSAINT's drawn
  // subgraphs), made once from the whole graph on the host, with the
  // loader's batch_size (its unit is the sampler's), its parallel work on
  // `exec`'s threads; null for samplers that batch seeds.
  std::shared_ptr<const subgraph_batches> (*subgraph_batching)(csr_view graph,
                                                               const sampler_options& options,
                                                               std::int64_t batch_size,
                                                               const executor& exec) = nullptr;
  // Its subgraphs are drawn afresh (GraphSAINT): an epoch does not pass over
  // every vertex once, so it cannot evaluate (sampled evaluation is
  // refused), and the batching weighs each seed's loss
  // (subgraph_batches::loss_weights), which the trainer sums on the host.
  bool draws_subgraphs = false;
  // What its subgraph_batching makes can be kept in and read back from
  // sampler_options::cache_dir (Cluster-GCN's clustering, GraphSAINT's
  // presampled counts); the option is
  // refused for the others, which would ignore it.
  bool keeps_batching = false;
  bool takes_replacement = false;
  bool takes_weights = false;
  std::vector<sampler_parameter> parameters = {};
  // The cost model's family (distributed/cost_model.hpp) that predicts its
  // traffic; empty where none does yet.
  std::string_view cost_family = {};
  // The sampler's own rules on the common options (say, a bound on the
  // fanouts), checked by validate() after the common ones; may be null.
  void (*check)(const sampler_options& options) = nullptr;
  std::unique_ptr<sampling_algorithm> (*make)(sampling_context& context) = nullptr;

  [[nodiscard]] bool batches_subgraphs() const { return subgraph_batching != nullptr; }
};

// An entry's `make` for an algorithm built from the context alone.
template <class Algorithm>
std::unique_ptr<sampling_algorithm> make_sampling(sampling_context& context) {
  return std::make_unique<Algorithm>(context);
}

// Every registered sampler, in the order --help lists them.
[[nodiscard]] const std::vector<sampler_entry>& sampler_table();

// The entry named `name` (or by one of its aliases); an option_error naming
// sampler_options.kind and listing the names otherwise.
[[nodiscard]] const sampler_entry& find_sampler(std::string_view name);

// The canonical names, in table order.
[[nodiscard]] std::vector<std::string> sampler_names();

// Every parameter name of any sampler, each once, in table order.
[[nodiscard]] std::vector<sampler_parameter> all_sampler_parameters();

}  // namespace bulkgnn::sampler
