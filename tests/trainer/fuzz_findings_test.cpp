// Inputs that fuzz/checkpoint_fuzzer found to break the checkpoint reader,
// each kept as a regression test.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "bulkgnn/core/error.hpp"
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

// The manifest fuzzer's finding (a JSON integer too large for int64 parses as
// a float, and converting it was undefined) applies to the checkpoint's
// counts as well: they must be rejected by name, with the CRC still valid.
TEST(CheckpointFuzzFindings, RejectsACountThatIsNotAnInteger) {
  for (const std::string& epochs : {std::string(30, '9'), std::string("2.5"), std::string("-1")}) {
    const std::string header =
        R"({"fingerprint":{},"epochs_done":)" + epochs + R"(,"optimizer_steps":1,"history":[]})";
    const auto header_size = static_cast<std::uint64_t>(header.size());
    std::string body = "bulkgnn-checkpoint-v1\n";
    body.append(reinterpret_cast<const char*>(&header_size), sizeof header_size);
    body += header + std::string(24, '\0');
    const auto crc = static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                      reinterpret_cast<const Bytef*>(body.data()),
                                                      static_cast<uInt>(body.size())));
    body.append(reinterpret_cast<const char*>(&crc), sizeof crc);
    const scratch_dir dir;
    std::ofstream(checkpoint_path(dir.path()), std::ios::binary) << body;
    try {
      (void)load_checkpoint(dir.path());
      FAIL() << "epochs_done " << epochs << " was accepted";
    } catch (const data_error& e) {
      EXPECT_NE(std::string(e.what()).find("\"epochs_done\" is not a non-negative integer"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace bulkgnn::trainer
