#pragma once

#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include <string>
#include <string_view>
#include <vector>

// Samplers written by their users as programs: one hop's steps over the
// matrix operations the built-in samplers are made of (select the
// frontier's rows, multiply, sample per row, relabel, induce the block,
// normalise), run at every hop of every bulk by the C++ pipeline, with the
// built-in samplers' kernels and random streams: the same minibatches for
// any thread count, bulk size and rank count, and, written as a built-in
// sampler is, that sampler's minibatches bit for bit. Python's
// bulkgnn.define_sampler writes them; the CLI reads them with
// --sampler-program FILE. sampler/program/examples/ holds sage, LADIES and a
// sampler of neither kind written this way.
namespace bulkgnn::sampler {

// The operations of a hop. A matrix's rows are per destination (one per
// frontier vertex, in frontier order) or per minibatch (one per segment of
// the frontier); its columns are vertex ids. A block has one row per
// destination and the sources' local positions as columns.
enum class program_operation {
  // The frontier's rows of A, per destination: Q·A with Q selecting them,
  // never materialised (a sample_rows of it reads the graph directly).
  frontier_rows,
  // Q, per minibatch: row j holds the vertices of minibatch j's frontier,
  // with value 1 (scale "one", a pattern) or 1/(deg(u)+1)² (scale
  // "gcn-squared", LADIES' Â(u,·)² with self loops).
  frontier_selection,
  // Q·A, or Q·(A + I) with self_loops, for a per-minibatch Q.
  multiply,
  // fanouts[hop] entries of each row, uniformly or by value (successive
  // sampling without replacement), keyed by (minibatch, vertex) for rows per
  // destination and by the minibatch alone for rows per minibatch. Rows per
  // destination must be frontier_rows (a node-wise draw). With variates
  // "shared", the frontier's rows draw LABOR-0's way instead: each column
  // draws one variate per minibatch, which the minibatch's rows share, and a
  // row keeps column t iff its variate is below fanout / degree (uniform,
  // without replacement). A hop draws once (a second draw would reuse the
  // first one's streams).
  sample_rows,
  // A per-destination draw relabelled per minibatch: the next frontier (the
  // destinations, then the drawn vertices in order of first appearance) and
  // the block (the draw's values). A link minibatch's own edges are left
  // out first.
  relabel,
  // The next frontier of a per-minibatch matrix: each minibatch's
  // destinations, then its row's columns in order of first appearance.
  sources,
  // The block from the destinations to `sources`: A's entries between them
  // (and A + I's self loops with self_loops), each divided by its source's
  // entry in `inverse_probabilities` when given (importance weights 1/p): a
  // multiply with self_loops whose sources (or its draw's) these are, so that
  // every source has a positive p.
  induce,
  // The block's rows scaled to sum to 1 (rows summing to 0 are kept).
  normalize_rows,
};

enum class selection_scale { one, gcn_squared };

// One step: the values it reads and the value(s) it makes, by name. "frontier"
// names the hop's frontier; every other name is made by one step and read by
// later ones.
struct program_step {
  program_operation operation = program_operation::frontier_rows;
  std::string input = {};   // the value read (none for the frontier_* steps)
  std::string output = {};  // relabel: the next frontier
  std::string block = {};   // relabel: the block
  // induce: the per-minibatch matrix whose entries are the sources'
  // probabilities; empty for unscaled blocks.
  std::string inverse_probabilities = {};
  bool self_loops = false;
  kernels::weighting weights = kernels::weighting::uniform;
  kernels::replacement replacement = kernels::replacement::without;
  bool shared_variates = false;  // sample_rows: LABOR-0's draw
  selection_scale scale = selection_scale::one;
};

struct sampler_program {
  std::string name;
  std::string summary;
  // The layer its blocks are made for (sampler_entry::layer): "sage" for
  // patterns averaged per destination, "gcn" or "graph-conv" where the block
  // values are the aggregation weights. Front ends check it names a layer.
  std::string layer;
  std::vector<program_step> hop;
  std::string sources;  // the names of what a hop hands on
  std::string block;

  // Whether a fanout counts draws per destination or per minibatch (what its
  // sample_rows step reads); a program that draws nothing takes the fanouts
  // as per destination.
  [[nodiscard]] fanout_unit fanout() const;
  // Whether `step` reads the frontier's rows (a frontier_rows step's output).
  [[nodiscard]] bool reads_frontier_rows(const program_step& step) const;
  // Whether every step is per destination: each destination's draw is its
  // own, so a slice of a minibatch samples alone and a link minibatch's own
  // edges can be left out (relabel).
  [[nodiscard]] bool per_destination_only() const;
};

// The program in `json` (format "bulkgnn-sampler-program", version 1),
// checked: known operations and fields, names made once before they are
// read, each value of the kind its reader takes, one draw, probabilities
// every source has, and a block over the sources the hop hands on. An option_error naming `origin`
// (a file, or the Python call) and the step otherwise.
[[nodiscard]] sampler_program parse_sampler_program(std::string_view json, std::string_view origin);
// The program as JSON that parse_sampler_program reads back equal.
[[nodiscard]] std::string to_json(const sampler_program& program);

// Adds the program to the samplers find_sampler knows, under its name, and
// returns its entry; registering an equal program again returns the same
// entry. A name of a built-in sampler, or one registered with a different
// program, is refused. Register before the loaders that use it start.
const sampler_entry& register_sampler_program(const sampler_program& program);

// The registered programs' entries, in registration order.
[[nodiscard]] std::vector<const sampler_entry*> registered_programs();
// The program registered as `name`; null where none is.
[[nodiscard]] const sampler_program* find_sampler_program(std::string_view name);

}  // namespace bulkgnn::sampler
