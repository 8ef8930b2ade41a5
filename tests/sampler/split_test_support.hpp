#pragma once

#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <gtest/gtest.h>

#include <string>

namespace bulkgnn::sampler::testing {

inline sampler_options split_options_for(sampler_kind kind) {
  if (kind == sampler_kind::node_wise) return {.kind = kind, .fanouts = {5, 3, -1}, .seed = 11};
  return {.kind = kind, .fanouts = {40, 30}, .seed = 11};
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
