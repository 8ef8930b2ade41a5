#pragma once

#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace bulkgnn::sampler::testing {

// Options that exercise `kind` (any sampler of the table): node-wise takes
// every neighbour at its last hop; other per-destination samplers draw a few
// per vertex; layer-wise ones draw many vertices per minibatch.
inline sampler_options split_options_for(const std::string& kind) {
  if (kind == "sage") return {.kind = kind, .fanouts = {5, 3, -1}, .seed = 11};
  if (find_sampler(kind).batches_subgraphs())
    return {.kind = kind, .fanouts = {-1, -1}, .seed = 11};
  if (find_sampler(kind).fanout == fanout_unit::per_destination)
    return {.kind = kind, .fanouts = {5, 3}, .seed = 11};
  return {.kind = kind, .fanouts = {40, 30}, .seed = 11};
}

// A gtest name for a sampler: letters, digits and '_'.
inline std::string test_name_of(std::string kind) {
  std::ranges::replace(kind, '-', '_');
  return kind;
}

// Bit for bit: ids, seeds, input nodes and every block's structure and values.
inline void expect_same_minibatch(const minibatch& a, const minibatch& b,
                                  const std::string& where) {
  EXPECT_EQ(a.index, b.index) << where;
  EXPECT_EQ(a.seeds, b.seeds) << where;
  EXPECT_EQ(a.input_nodes, b.input_nodes) << where;
  ASSERT_EQ(a.blocks.size(), b.blocks.size()) << where;
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_EQ(a.blocks[l].rows, b.blocks[l].rows) << where << " block " << l;
    EXPECT_EQ(a.blocks[l].cols, b.blocks[l].cols) << where << " block " << l;
    EXPECT_EQ(a.blocks[l].indptr, b.blocks[l].indptr) << where << " block " << l;
    EXPECT_EQ(a.blocks[l].indices, b.blocks[l].indices) << where << " block " << l;
    EXPECT_EQ(a.blocks[l].values, b.blocks[l].values) << where << " block " << l;
  }
}

}  // namespace bulkgnn::sampler::testing
