// Sampler programs: written as a built-in sampler they draw its minibatches
// bit for bit; their draws do not depend on the bulk size, thread count or
// back end; bad programs are refused at registration, naming the step.
// (Every slice of a program's minibatch is the whole one cut to it:
// split_sampling_test runs its suite over the example programs; the drawn
// distribution: layer_wise_statistics_test.)
#include "bulkgnn/sampler/sampler_program.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "program_examples.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bulkgnn::sampler {
namespace {

using bulkgnn::testing::example_program_text;
using bulkgnn::testing::register_example_programs;
using testing::expect_same_minibatch;

// 300 vertices of skewed degree, with edge weights 1, 1.5, ..., 4.
csr_matrix weighted_graph() {
  auto g = bulkgnn::testing::random_graph(300, 11, 40);
  g.values.resize(g.indices.size());
  for (std::size_t e = 0; e < g.values.size(); ++e) g.values[e] = 1.0f + 0.5f * (e % 7);
  return g;
}

// Every minibatch of one epoch (batch 32, sampled 4 at a time) of `program`
// and of `builtin` is the same, bit for bit, on the cpu and reference back
// ends.
void expect_same_minibatches(csr_view g, sampler_options program, sampler_options builtin) {
  const auto seeds = bulkgnn::testing::all_vertices(static_cast<vertex_t>(g.rows));
  const epoch_plan plan(seeds, 32, builtin.seed, 3);
  for (const backend kind : {backend::cpu, backend::reference}) {
    bulk_sampler ours(g, program, executor{kind});
    bulk_sampler theirs(g, builtin, executor{kind});
    for (std::int64_t first = 0; first < plan.num_minibatches(); first += 4) {
      const auto count = std::min<std::int64_t>(4, plan.num_minibatches() - first);
      const auto a = ours.sample(plan, first, count);
      const auto b = theirs.sample(plan, first, count);
      for (std::int64_t j = 0; j < count; ++j)
        expect_same_minibatch(a.extract(j), b.extract(j),
                              fmt::format("{} against {} on {}, minibatch {}", program.kind,
                                          builtin.kind, backend_name(kind), first + j));
    }
  }
}

TEST(SamplerProgram, SageWrittenAsAProgramDrawsSagesMinibatches) {
  register_example_programs();
  const auto g = bulkgnn::testing::random_graph(300, 11, 40);
  expect_same_minibatches(g.view(), {.kind = "sage-program", .fanouts = {5, 3}, .seed = 5},
                          {.kind = "sage", .fanouts = {5, 3}, .seed = 5});
  expect_same_minibatches(g.view(), {.kind = "sage-program", .fanouts = {-1, 4}, .seed = 2},
                          {.kind = "sage", .fanouts = {-1, 4}, .seed = 2});
}

TEST(SamplerProgram, LaborWrittenAsAProgramDrawsLaborsMinibatches) {
  register_example_programs();
  const auto g = bulkgnn::testing::random_graph(300, 11, 40);
  expect_same_minibatches(g.view(), {.kind = "labor-program", .fanouts = {5, 3}, .seed = 5},
                          {.kind = "labor", .fanouts = {5, 3}, .seed = 5});
  EXPECT_FALSE(find_sampler("labor-program").host_only);
  bulkgnn::testing::expect_sampler_refuses(g.view(), {.kind = "labor-program", .fanouts = {5, -1}},
                                           "'labor-program'");
}

TEST(SamplerProgram, WeightedDrawsWithReplacementMatchSagesOptions) {
  auto text = example_program_text("sage.json");
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("\"sage-program\"", "\"sage-weighted-replacement\"");
  replace("\"weights\": \"uniform\", \"replacement\": false",
          "\"weights\": \"value\", \"replacement\": true");
  register_sampler_program(parse_sampler_program(text, "test"));
  const auto g = weighted_graph();
  expect_same_minibatches(g.view(),
                          {.kind = "sage-weighted-replacement", .fanouts = {5, 3}, .seed = 5},
                          {.kind = "sage",
                           .fanouts = {5, 3},
                           .replacement = kernels::replacement::with,
                           .weighted = true,
                           .seed = 5});
}

TEST(SamplerProgram, LadiesWrittenAsAProgramDrawsLadiesMinibatchesWithTheirWeights) {
  register_example_programs();
  const auto g = bulkgnn::testing::random_graph(300, 11, 40);
  expect_same_minibatches(g.view(), {.kind = "ladies-program", .fanouts = {48, 48}, .seed = 5},
                          {.kind = "ladies", .fanouts = {48, 48}, .seed = 5});
  // -1 takes every column a minibatch's frontier reaches.
  expect_same_minibatches(g.view(), {.kind = "ladies-program", .fanouts = {-1, 20}, .seed = 1},
                          {.kind = "ladies", .fanouts = {-1, 20}, .seed = 1});
}

TEST(SamplerProgram, DigestsDoNotDependOnBulkSizeThreadsOrBackEnd) {
  const auto g = weighted_graph();
  const auto seeds = bulkgnn::testing::all_vertices(300);
  for (const auto& name : register_example_programs()) {
    SCOPED_TRACE(name);
    const auto options = testing::split_options_for(name);
    const auto plan = bulkgnn::testing::plan_for(options, g.view(), seeds, 32, 1);
    bulkgnn::testing::expect_same_digests_for_any_bulk_threads_and_back_end(g.view(), options,
                                                                            plan);
  }
}

TEST(SamplerProgram, ARegisteredProgramIsASamplerOfItsOwnUnitAndLayer) {
  register_example_programs();
  EXPECT_EQ(find_sampler("sage-program").fanout, fanout_unit::per_destination);
  EXPECT_EQ(find_sampler("sage-program").layer, "sage");
  EXPECT_EQ(find_sampler("ladies-program").fanout, fanout_unit::per_minibatch);
  EXPECT_EQ(find_sampler("frontier-count").layer, "gcn");
  const auto names = sampler_names();
  EXPECT_NE(std::ranges::find(names, "frontier-count"), names.end());
  const auto g = bulkgnn::testing::random_graph(100, 3);
  EXPECT_TRUE(
      bulk_sampler(g.view(), {.kind = "sage-program", .fanouts = {3}}).destinations_draw_alone());
  EXPECT_TRUE(bulk_sampler(g.view(), {.kind = "sage-program", .fanouts = {3}}).leaves_out_edges());
  EXPECT_FALSE(
      bulk_sampler(g.view(), {.kind = "ladies-program", .fanouts = {9}}).leaves_out_edges());
}

// Over data-parallel ranks the program is cut from the whole minibatch on
// each rank; the built-in LADIES splits its draw over the ranks' columns:
// both give each slice the same part, bit for bit.
TEST(SamplerProgram, LadiesProgramSlicesEqualTheBuiltInLadiesSlices) {
  register_example_programs();
  const auto g = bulkgnn::testing::random_graph(400, 5);
  const auto seeds = bulkgnn::testing::all_vertices(400);
  const epoch_plan plan(seeds, 40, 3, 2);
  bulk_sampler ours(g.view(), {.kind = "ladies-program", .fanouts = {40, 30}, .seed = 3});
  bulk_sampler theirs(g.view(), {.kind = "ladies", .fanouts = {40, 30}, .seed = 3});
  for (const int slices : {2, 3}) {
    for (int slice = 0; slice < slices; ++slice) {
      const minibatch_split split{.slice = slice, .slices = slices};
      const auto a = ours.sample_slices(plan, 0, plan.num_minibatches(), split);
      const auto b = theirs.sample_slices(plan, 0, plan.num_minibatches(), split);
      for (std::int64_t j = 0; j < a.count(); ++j)
        expect_same_minibatch(a.extract(j), b.extract(j),
                              fmt::format("slice {} of {}, minibatch {}", slice, slices, j));
    }
  }
}

TEST(SamplerProgram, JsonReadsBackEqual) {
  for (const char* file : {"sage.json", "labor.json", "ladies.json", "frontier-count.json"}) {
    const auto program = parse_sampler_program(example_program_text(file), file);
    const auto text = to_json(program);
    EXPECT_EQ(to_json(parse_sampler_program(text, "again")), text) << file;
  }
}

// The example LADIES program with `from` replaced by `to` is refused with a
// message holding `expected`.
void expect_refused(const std::string& from, const std::string& to, const std::string& expected) {
  auto text = example_program_text("ladies.json");
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    (void)parse_sampler_program(text, "my.json");
    ADD_FAILURE() << "accepted " << to << "; expected a refusal naming " << expected;
  } catch (const option_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find("my.json"), std::string::npos) << message;
  }
}

TEST(SamplerProgram, BadProgramsAreRefusedNamingTheStepAndTheProblem) {
  expect_refused("\"op\": \"multiply\"", "\"op\": \"multiplie\"",
                 "hop step 1: op must be one of frontier_rows");
  expect_refused("\"scale\": \"gcn-squared\"", "\"scale\": \"gcn\"",
                 "hop step 0 (frontier_selection): scale must be one of");
  expect_refused("\"self_loops\": true, \"out\": \"p\"", "\"self_loop\": true, \"out\": \"p\"",
                 "hop step 1 (multiply): unknown field 'self_loop'");
  expect_refused("\"matrix\": \"q\"", "\"matrix\": \"qq\"",
                 "matrix 'qq' is not made by an earlier step");
  expect_refused("\"matrix\": \"drawn\"", "\"matrix\": \"frontier\"",
                 "hop step 3 (sources): matrix 'frontier' is a vertex list");
  expect_refused("\"out\": \"weighted\"", "\"out\": \"p\"", "out 'p' must be a new name");
  expect_refused("\"block\": \"block\"\n}", "\"block\": \"weighted\"\n}",
                 "block 'weighted' was normalised in place");
  expect_refused("\"sources\": \"sources\",\n  \"block\"", "\"sources\": \"p\",\n  \"block\"",
                 "sources 'p' is a per-minibatch matrix; it must be a vertex list");
  expect_refused("\"version\": 1", "\"version\": 2", "version must be 1");
  expect_refused("\"name\": \"ladies-program\"", "\"name\": \"Ladies Program\"",
                 "name must be 1 to 64 of a-z");
  expect_refused("\"weights\": \"value\"", "\"weights\": 1", "weights must be a string");
  expect_refused("\"hop\": [", "\"hop\": [}", "is not JSON");
  expect_refused("\"weights\": \"value\", \"replacement\": false",
                 "\"weights\": \"value\", \"variates\": \"shared\"",
                 "variates 'shared' (LABOR-0's draw) takes the frontier's rows");
  expect_refused("\"format\": \"bulkgnn-sampler-program\"", "\"format\": 1",
                 "format must be a string");
  // A block must index the sources the hop hands on, and 1/p must exist for
  // every source: p a multiply of A + I that the sources were drawn from.
  expect_refused("\"sources\": \"sources\",\n  \"block\"",
                 "\"sources\": \"frontier\",\n  \"block\"",
                 "block 'block' has the positions in 'sources' as columns, not in the sources "
                 "'frontier'");
  expect_refused("\"inverse_probabilities\": \"p\"", "\"inverse_probabilities\": \"q\"",
                 "inverse_probabilities 'q' must be a multiply with self_loops");
  expect_refused("\"self_loops\": true, \"out\": \"p\"", "\"self_loops\": false, \"out\": \"p\"",
                 "inverse_probabilities 'p' must be a multiply with self_loops");
  expect_refused("{\"op\": \"sources\", \"matrix\": \"drawn\", \"out\": \"sources\"}",
                 "{\"op\": \"sample_rows\", \"matrix\": \"drawn\", \"out\": \"again\"},\n"
                 "{\"op\": \"sources\", \"matrix\": \"drawn\", \"out\": \"sources\"}",
                 "hop step 3 (sample_rows): a hop draws once");
  EXPECT_THROW((void)parse_sampler_program("[]", "my.json"), option_error);
}

TEST(SamplerProgram, RegistrationRefusesTakenNames) {
  register_example_programs();
  auto program = parse_sampler_program(example_program_text("ladies.json"), "test");
  program.name = "ladies";
  EXPECT_THROW(register_sampler_program(program), option_error);
  program.name = "node-wise";  // sage's alias
  EXPECT_THROW(register_sampler_program(program), option_error);
  program.name = "sage-program";  // registered with other steps
  try {
    register_sampler_program(program);
    ADD_FAILURE() << "a different program replaced sage-program";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("a different program"), std::string::npos) << e.what();
  }
  EXPECT_EQ(
      &register_sampler_program(parse_sampler_program(example_program_text("sage.json"), "again")),
      &find_sampler("sage-program"));
}

TEST(SamplerProgram, RunTimeRefusalsNameTheProgram) {
  const auto unweighted = bulkgnn::testing::random_graph(100, 3);
  auto text = example_program_text("sage.json");
  text.replace(text.find("\"sage-program\""), 14, "\"sage-by-weight\"");
  text.replace(text.find("\"uniform\""), 9, "\"value\"");
  register_sampler_program(parse_sampler_program(text, "test"));
  bulkgnn::testing::expect_sampler_refuses(
      unweighted.view(), {.kind = "sage-by-weight", .fanouts = {3}}, "'sage-by-weight'");

  auto pattern_block = example_program_text("sage.json");
  pattern_block.replace(pattern_block.find("\"sage-program\""), 14, "\"sage-normalised\"");
  pattern_block.replace(pattern_block.find("\"block\": \"block\"}"), 17,
                        "\"block\": \"pattern\"},\n{\"op\": \"normalize_rows\", \"block\": "
                        "\"pattern\", \"out\": \"block\"}");
  register_sampler_program(parse_sampler_program(pattern_block, "test"));
  const epoch_plan plan(bulkgnn::testing::all_vertices(100), 10, 0, 0);
  bulk_sampler sampler(unweighted.view(), {.kind = "sage-normalised", .fanouts = {3}});
  try {
    (void)sampler.sample(plan, 0, 1);
    ADD_FAILURE() << "normalised a block without values";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("normalize_rows of 'pattern'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bulkgnn::sampler
