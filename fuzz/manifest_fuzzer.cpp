// Feeds the input to dataset::open_native as manifest.json beside a small
// valid set of arrays (4 nodes, 3 edges, 2 features, labels, split "s"), then
// validates the dataset and reads its training vertices.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "bulkgnn/data/dataset.hpp"
#include "fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using bulkgnn::data::dtype;
using bulkgnn::data::npy_array;

template <class T>
void write_array(const fs::path& path, std::vector<std::int64_t> shape,
                 std::initializer_list<T> values) {
  fs::create_directories(path.parent_path());
  const auto a = npy_array::create(path, bulkgnn::data::dtype_of<T>(), std::move(shape));
  std::copy(values.begin(), values.end(), a.template as<T>().begin());
}

void write_arrays(const fs::path& dir) {
  write_array<std::int64_t>(dir / "indptr.npy", {5}, {0, 1, 2, 3, 3});
  write_array<std::int32_t>(dir / "indices.npy", {3}, {1, 2, 3});
  write_array<float>(dir / "edge_weight.npy", {3}, {1, 0.5f, 2});
  write_array<float>(dir / "features.npy", {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  write_array<std::int32_t>(dir / "labels.npy", {4}, {0, 1, -1, 2});
  write_array<std::int32_t>(dir / "split/s/train.npy", {2}, {0, 1});
  write_array<std::int32_t>(dir / "split/s/valid.npy", {1}, {2});
  write_array<std::int32_t>(dir / "split/s/test.npy", {1}, {3});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bulkgnn;
  const fuzz::scratch_dir dir;
  write_arrays(dir.path());
  fuzz::write_file(dir.path() / "manifest.json", fuzz::as_text(data, size));
  fuzz::expect_clean_outcome([&] {
    // Opening validates every array.
    const auto d = data::dataset::open_native(dir.path());
    (void)d.training_vertices("");
  });
  return 0;
}
