#include "bulkgnn/data/fingerprint.hpp"

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/generators.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;

using bulkgnn::testing::scratch_dir;

dataset csbm(const fs::path& dir, const csbm_options& options) {
  generate_csbm(dir, options);
  return dataset::open_native(dir);
}

const csbm_options small{.nodes = 3000, .features = 8, .quiet = true};

TEST(ContentFingerprint, IsTheSameForTheSameContentUnderAnotherNameAndPath) {
  const scratch_dir scratch;
  const auto a = csbm(scratch / "a", small);
  generate_csbm(scratch / "b", small);
  auto manifest = nlohmann::json::parse(std::ifstream(scratch / "b" / "manifest.json"));
  manifest["name"] = "another-name";
  std::ofstream(scratch / "b" / "manifest.json") << manifest.dump();
  const auto b = dataset::open_native(scratch / "b");
  ASSERT_NE(a.name(), b.name());
  EXPECT_EQ(content_fingerprint(a), content_fingerprint(b));
}

TEST(ContentFingerprint, NamesTheShapes) {
  const scratch_dir scratch;
  const auto ds = csbm(scratch / "ds", small);
  const auto text = content_fingerprint(ds);
  EXPECT_NE(text.find(fmt::format("3000 vertices, {} edges, 8 features, 4 classes, content ",
                                  ds.num_edges())),
            std::string::npos)
      << text;
}

TEST(ContentFingerprint, DiffersWhenOneLabelDiffers) {
  const scratch_dir scratch;
  generate_csbm(scratch / "a", small);
  const auto before = content_fingerprint(dataset::open_native(scratch / "a"));
  {
    // The last int32 of labels.npy is the last vertex's label.
    std::fstream labels(scratch / "a" / "labels.npy",
                        std::ios::in | std::ios::out | std::ios::binary);
    labels.seekp(-4, std::ios::end);
    const std::int32_t label = -1;
    labels.write(reinterpret_cast<const char*>(&label), sizeof label);
  }
  EXPECT_NE(content_fingerprint(dataset::open_native(scratch / "a")), before);
}

TEST(ContentFingerprint, DiffersForTheSameGraphAndOtherFeatures) {
  const scratch_dir scratch;
  auto other = small;
  other.signal = 2.0;
  const auto a = csbm(scratch / "a", small);
  const auto b = csbm(scratch / "b", other);
  ASSERT_TRUE(std::ranges::equal(a.graph().indices, b.graph().indices));
  EXPECT_NE(content_fingerprint(a), content_fingerprint(b));
}

}  // namespace
}  // namespace bulkgnn::data
