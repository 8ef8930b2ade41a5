// Imports a small OGB raw directory in which one file is replaced by the
// input, then opens and validates what the import wrote. The first input byte
// picks the file; its top bit says whether the rest is used as the raw file
// bytes (exercising the gzip layer) or compressed first (so that mutations
// reach the CSV parsing).
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/ogb_import.hpp"
#include "fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;

// The files of a valid 4-node dataset. Each input replaces one of them; of the
// others only the edges, meta.json (num_classes bounds the labels) and the rest
// of a replaced split's files are written: every .gz file costs the import
// about 20 MiB of fresh buffers and a reader thread, which made executions
// twice as slow. num-node-list.csv.gz is never replaced: any node count is
// legitimate, and a large one makes the import create arrays of that size,
// which is no finding.
struct ogb_file {
  const char* path;
  std::string_view valid_content;
  bool always_written;
  bool in_split;
};
constexpr std::array<ogb_file, 8> ogb_files{{
    {"raw/edge.csv.gz", "0,1\n1,2\n2,3\n", true, false},
    {"raw/num-edge-list.csv.gz", "3\n", false, false},
    {"raw/node-feat.csv.gz", "0.5,1\n2,-3e2\n4,5\n6,7.25\n", false, false},
    {"raw/node-label.csv.gz", "0\n1\nnan\n2.0\n", false, false},
    {"split/s/train.csv.gz", "0\n1\n", false, true},
    {"split/s/valid.csv.gz", "2\n", false, true},
    {"split/s/test.csv.gz", "3\n", false, true},
    {"meta.json", R"({"add_inverse_edge": true, "num_classes": 3})", true, false},
}};

void write_gzip(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  gzFile gz = gzopen(path.c_str(), "wb");
  if (gz == nullptr ||
      (!text.empty() && gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) == 0) ||
      gzclose(gz) != Z_OK)
    std::abort();
}

void write_dataset(const fs::path& dir, std::size_t replaced, std::string_view input, bool raw) {
  write_gzip(dir / "raw/num-node-list.csv.gz", "4\n");
  for (std::size_t i = 0; i < ogb_files.size(); ++i) {
    const ogb_file& file = ogb_files[i];
    const bool needed =
        i == replaced || file.always_written || (file.in_split && ogb_files[replaced].in_split);
    if (!needed) continue;
    const fs::path path = dir / file.path;
    const std::string_view content = i == replaced ? input : file.valid_content;
    if (path.extension() == ".gz" && !(i == replaced && raw))
      write_gzip(path, content);
    else
      bulkgnn::fuzz::write_file(path, content);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bulkgnn;
  if (size == 0) return 0;
  const std::size_t replaced = (data[0] & 0x7f) % ogb_files.size();
  const bool raw = (data[0] & 0x80) != 0;
  const fuzz::scratch_dir dir;
  write_dataset(dir.path() / "ogb", replaced, fuzz::as_text(data + 1, size - 1), raw);
  fuzz::expect_clean_outcome([&] {
    data::import_ogb(
        dir.path() / "ogb", dir.path() / "native",
        {.add_inverse_edges = std::nullopt, .quiet = true, .edge_weight_column = std::nullopt});
    (void)data::dataset::open_native(dir.path() / "native");  // validates every array
  });
  return 0;
}
