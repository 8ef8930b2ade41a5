// One golden digest per sampler: what each draws on a fixed small graph with
// fixed seeds, stored here, so that any change in what a sampler draws is a
// visible, deliberate change of this file (the digests do not depend on the
// thread count, bulk size, backend or rank count: bulk_sampler_test and the
// split and GPU tests compare those paths).
//
// A sampler added to the table without a golden digest fails here with the
// digest to add; a change that alters draws on purpose updates the value
// beside the reason in the commit.
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include "plan_digests.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <iomanip>
#include <map>
#include <sstream>
#include <string>

namespace bulkgnn::sampler {
namespace {

// 300 vertices of skewed degree, with edge weights 1, 1.5, ..., 4.
csr_matrix golden_graph() {
  auto g = bulkgnn::testing::random_graph(300, 11, 40);
  g.values.resize(g.indices.size());
  for (std::size_t e = 0; e < g.values.size(); ++e) g.values[e] = 1.0f + 0.5f * (e % 7);
  return g;
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

// One epoch of batch 32 over every vertex, seed 5, epoch 1, folded into one
// digest.
// A sampler that batches clusters takes 3 of 30 clusters of ten vertices.
std::uint64_t epoch_digest(const sampler_options& options) {
  const auto g = golden_graph();
  const auto seeds = bulkgnn::testing::all_vertices(300);
  const auto plan = bulkgnn::testing::plan_for(options, g.view(), seeds, 32, 1);
  run_digest digest;
  for (auto d : bulkgnn::testing::plan_digests(g.view(), options, plan, 4)) digest.add(d);
  return digest.value();
}

// The options of each golden run: every sampler of the table with fanouts of
// its unit, and the node-wise variants.
std::map<std::string, sampler_options> golden_runs() {
  std::map<std::string, sampler_options> runs;
  for (const auto& entry : sampler_table()) {
    const auto fanouts = entry.batches_subgraphs() ? std::vector<std::int64_t>{-1, -1}
                         : entry.fanout == fanout_unit::per_destination
                             ? std::vector<std::int64_t>{5, 3}
                             : std::vector<std::int64_t>{48, 48};
    const sampler_options o{.kind = std::string(entry.name), .fanouts = fanouts, .seed = 5};
    runs[o.kind] = o;
  }
  runs["sage, with replacement"] = {
      .fanouts = {5, 3}, .replacement = kernels::replacement::with, .seed = 5};
  runs["sage, weighted"] = {.fanouts = {5, 3}, .weighted = true, .seed = 5};
  runs["sage, weighted, with replacement"] = {
      .fanouts = {5, 3}, .replacement = kernels::replacement::with, .weighted = true, .seed = 5};
  return runs;
}

// Stored 2026-11-28 (commit after db2ce7d).
const std::map<std::string, std::uint64_t> golden = {
    {"cluster-gcn", 0x70d2ff61f5543c02},
    {"fastgcn", 0xf43b658ae6c3a570},
    {"labor", 0x8595e7498d83b359},
    {"labor-star", 0x152987d898bd9cb0},
    {"pinsage", 0xe52ed2ce4d14fc51},
    {"ladies", 0xe82fa7c2ee275568},
    {"random-walk", 0xaf8bc0af9fc1cd58},
    {"saint-edge", 0x74a23e249a12790f},
    {"saint-node", 0x922e6e3c7e470712},
    {"saint-rw", 0xd4d08f7f7cc92d20},
    {"sage", 0x44c8194124842053},
    {"sage, weighted", 0xaf966e98d81a4a60},
    {"sage, weighted, with replacement", 0xc13764c76d1cd477},
    {"sage, with replacement", 0x52c5816a9ba19ac5},
    {"shadow", 0x72789e44b23954b2},
};

TEST(GoldenDigests, EverySamplerDrawsWhatItDrewWhenItsDigestWasStored) {
  for (const auto& [name, options] : golden_runs()) {
    const auto digest = epoch_digest(options);
    const auto stored = golden.find(name);
    if (stored == golden.end()) {
      ADD_FAILURE() << "no golden digest for '" << name << "': add {\"" << name << "\", "
                    << hex(digest) << "},";
      continue;
    }
    EXPECT_EQ(digest, stored->second) << "'" << name << "' now draws " << hex(digest)
                                      << ": if the change is deliberate, store it";
  }
}

}  // namespace
}  // namespace bulkgnn::sampler
