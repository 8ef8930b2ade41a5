// Inputs that fuzz/checkpoint_fuzzer found to break the checkpoint reader,
// each kept as a regression test.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "bulkgnn/trainer/checkpoint.hpp"
#include "scratch_dir.hpp"

namespace bulkgnn::trainer {
namespace {

using bulkgnn::testing::scratch_dir;

// checkpoint-crash-3f41cf57: a valid checkpoint whose three arrays are empty
// made the reader memcpy from an empty vector's null data() (UBSan: null
// pointer passed as argument 1). It must load as a checkpoint with no
// parameters.
TEST(CheckpointFuzzFindings, LoadsEmptyParameterArrays) {
  const std::string header = R"({"fingerprint":{"dataset":"cora","seed":1,"hidden":16},)"
                             R"("epochs_done":1,"optimizer_steps":1,"history":[]})";
  const std::string input = std::string("bulkgnn-checkpoint-v1\nh\0\0\0\0\0\0\0", 30) + header +
                            std::string(24, '\0') + std::string("X\xa0U\xe8", 4);
  const scratch_dir dir;
  std::ofstream(checkpoint_path(dir.path()), std::ios::binary) << input;

  const auto c = load_checkpoint(dir.path());
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->fingerprint.at("seed"), 1);
  EXPECT_EQ(c->epochs_done, 1);
  EXPECT_TRUE(c->parameters.empty());
  EXPECT_TRUE(c->first_moment.empty());
  EXPECT_TRUE(c->second_moment.empty());
}

}  // namespace
}  // namespace bulkgnn::trainer
