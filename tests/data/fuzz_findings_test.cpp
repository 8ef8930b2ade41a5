// Inputs that fuzz/*_fuzzer found to break the data readers, each kept as a
// regression test: the reader must reject (or read) it cleanly.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/npy.hpp"
#include "scratch_dir.hpp"

namespace bulkgnn::data {
namespace {

using bulkgnn::testing::scratch_dir;

std::filesystem::path write_input(const scratch_dir& dir, const std::string& bytes) {
  const auto path = dir / "input";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// npy_fuzzer, npy-crash-8b421e38: a 91-byte version 1.0 header puts int64
// data at byte offset 101, and as<T>() handed out a misaligned pointer
// (UBSan: reference binding to misaligned address).
TEST(NpyFuzzFindings, RejectsDataNotAlignedToItsElements) {
  const std::string input = std::string("\x93NUMPY\x01\x00[\x00", 10) +
                            "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }" +
                            std::string(48, ' ') + "$" + std::string(12, ' ') + "\n" +
                            std::string(13, '\0') + std::string("\x01\x00\x00", 3);
  const scratch_dir dir;
  const auto path = write_input(dir, input);
  try {
    (void)npy_array::open(path);
    FAIL() << "a misaligned array opened";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not aligned"), std::string::npos) << e.what();
  }
}

// manifest_fuzzer, manifest-crash-e30d7c17: a "version" too large for any
// integer parses as a float, and reading it as an int was undefined (UBSan:
// 5.55556e+61 is outside the range of representable values of type 'int').
// A fractional version must not pass as 1 either.
TEST(ManifestFuzzFindings, RejectsAVersionThatIsNotTheInteger1) {
  for (const std::string& version :
       {std::string(61, '5') + "1", std::string("1.0"), std::string("1e0")}) {
    const scratch_dir dir;
    std::ofstream(dir / "manifest.json")
        << R"({"format": "bulkgnn-native", "version": )" << version << R"(, "splits": ["s"]})";
    try {
      (void)dataset::open_native(dir.path());
      FAIL() << "version " << version << " was accepted";
    } catch (const data_error& e) {
      EXPECT_NE(std::string(e.what()).find("manifest.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("unsupported version"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace bulkgnn::data
