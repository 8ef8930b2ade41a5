// The binary OGB layout (raw/data.npz, raw/node-label.npz), as
// ogbn-papers100M ships it, imports to the same dataset as the CSV layout of
// the same graph. The archives are written here by a small zip writer
// (stored or deflated members, optionally every size and offset in zip64
// records), so the test needs neither numpy nor the 100 GB original.
#include "bulkgnn/data/ogb_import.hpp"

#include <gtest/gtest.h>

#include <zlib.h>
#include "scratch_dir.hpp"
#include "test_files.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;
using bulkgnn::testing::gz_write;
using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::write_file;

const ogb_import_options quiet_as_given{
    .add_inverse_edges = false, .quiet = true, .edge_weight_column = std::nullopt};

template <class T>
void put(std::string& out, T value, int bytes = sizeof(T)) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string npy(const std::string& descr, const std::vector<std::int64_t>& shape, bool fortran,
                const std::string& data) {
  std::string dims;
  for (const auto d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (" + dims + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  put(out, static_cast<std::uint16_t>(dict.size()));
  return out + dict + data;
}

std::string raw_deflate(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip archive as Python's zipfile writes one for numpy.savez(_compressed).
class zip_writer {
 public:
  zip_writer(bool deflate, bool zip64) : deflate_(deflate), zip64_(zip64) {}

  void add(const std::string& name, const std::string& data) {
    const std::string stored = deflate_ ? raw_deflate(data) : data;
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const std::uint64_t offset = archive_.size();
    const std::uint32_t marker = 0xFFFFFFFF;
    std::string extra;
    if (zip64_) {
      put(extra, std::uint16_t{1});
      put(extra, std::uint16_t{24});
      put(extra, static_cast<std::uint64_t>(data.size()));
      put(extra, static_cast<std::uint64_t>(stored.size()));
      put(extra, offset);
    }
    const auto method = static_cast<std::uint16_t>(deflate_ ? 8 : 0);
    put(archive_, std::uint32_t{0x04034b50});
    put(archive_, std::uint16_t{45});
    put(archive_, std::uint16_t{0});
    put(archive_, method);
    put(archive_, std::uint32_t{0});  // time and date
    put(archive_, crc);
    put(archive_, zip64_ ? marker : static_cast<std::uint32_t>(stored.size()));
    put(archive_, zip64_ ? marker : static_cast<std::uint32_t>(data.size()));
    put(archive_, static_cast<std::uint16_t>(name.size()));
    put(archive_, std::uint16_t{0});
    archive_ += name + stored;

    put(directory_, std::uint32_t{0x02014b50});
    put(directory_, std::uint16_t{45});
    put(directory_, std::uint16_t{45});
    put(directory_, std::uint16_t{0});
    put(directory_, method);
    put(directory_, std::uint32_t{0});
    put(directory_, crc);
    put(directory_, zip64_ ? marker : static_cast<std::uint32_t>(stored.size()));
    put(directory_, zip64_ ? marker : static_cast<std::uint32_t>(data.size()));
    put(directory_, static_cast<std::uint16_t>(name.size()));
    put(directory_, static_cast<std::uint16_t>(extra.size()));
    put(directory_, std::uint16_t{0});  // comment
    put(directory_, std::uint16_t{0});  // disk
    put(directory_, std::uint16_t{0});  // internal attributes
    put(directory_, std::uint32_t{0});  // external attributes
    put(directory_, zip64_ ? marker : static_cast<std::uint32_t>(offset));
    directory_ += name + extra;
    ++entries_;
  }

  [[nodiscard]] std::string finish() const {
    std::string out = archive_ + directory_;
    const std::uint64_t directory_offset = archive_.size();
    if (zip64_) {
      const std::uint64_t record = out.size();
      put(out, std::uint32_t{0x06064b50});
      put(out, std::uint64_t{44});
      put(out, std::uint16_t{45});
      put(out, std::uint16_t{45});
      put(out, std::uint32_t{0});
      put(out, std::uint32_t{0});
      put(out, entries_);
      put(out, entries_);
      put(out, static_cast<std::uint64_t>(directory_.size()));
      put(out, directory_offset);
      put(out, std::uint32_t{0x07064b50});
      put(out, std::uint32_t{0});
      put(out, record);
      put(out, std::uint32_t{1});
    }
    put(out, std::uint32_t{0x06054b50});
    put(out, std::uint32_t{0});
    put(out, zip64_ ? std::uint16_t{0xFFFF} : static_cast<std::uint16_t>(entries_));
    put(out, zip64_ ? std::uint16_t{0xFFFF} : static_cast<std::uint16_t>(entries_));
    put(out, static_cast<std::uint32_t>(directory_.size()));
    put(out, zip64_ ? std::uint32_t{0xFFFFFFFF} : static_cast<std::uint32_t>(directory_offset));
    put(out, std::uint16_t{0});
    return out;
  }

 private:
  bool deflate_;
  bool zip64_;
  std::string archive_;
  std::string directory_;
  std::uint64_t entries_ = 0;
};

std::uint16_t float_to_half(float x) {
  // Exact for the values used here (small integers over 8), which fit a half.
  const auto bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = (bits >> 16) & 0x8000;
  if (x == 0) return static_cast<std::uint16_t>(sign);
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  const std::uint32_t mantissa = (bits >> 13) & 0x3FF;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) | mantissa);
}

// A small graph with every kind of data the binary layout carries.
struct graph_data {
  std::int64_t n = 0;
  std::vector<std::int64_t> src, dst;
  std::vector<float> features;  // n × f, exact in float16
  std::int64_t f = 3;
  std::vector<double> labels;    // NaN: unlabelled
  std::vector<float> edge_feat;  // E × 2
};

graph_data make_graph(std::int64_t n, std::int64_t edges) {
  graph_data g;
  g.n = n;
  for (std::int64_t e = 0; e < edges; ++e) {
    g.src.push_back((e * 37 + 11) % n);
    g.dst.push_back((e * e + 5) % n);
    g.edge_feat.push_back(static_cast<float>(e % 5) + 0.5F);
    g.edge_feat.push_back(static_cast<float>(e % 7) + 1.25F);
  }
  for (std::int64_t i = 0; i < n * g.f; ++i) g.features.push_back(static_cast<float>(i % 17) / 8);
  for (std::int64_t v = 0; v < n; ++v)
    g.labels.push_back(v % 9 == 4 ? std::numeric_limits<double>::quiet_NaN()
                                  : static_cast<double>(v % 3));
  return g;
}

void write_split(const fs::path& dir, std::int64_t n) {
  std::string train, valid, test;
  for (std::int64_t v = 0; v < n; ++v)
    (v % 5 < 3 ? train : v % 5 == 3 ? valid : test) += std::to_string(v) + "\n";
  gz_write(dir / "split" / "time" / "train.csv.gz", train);
  gz_write(dir / "split" / "time" / "valid.csv.gz", valid);
  gz_write(dir / "split" / "time" / "test.csv.gz", test);
}

void write_csv_layout(const fs::path& dir, const graph_data& g) {
  std::string edges, edge_feat, features, labels;
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    edges += std::to_string(g.src[e]) + "," + std::to_string(g.dst[e]) + "\n";
    edge_feat += fmt::format("{},{}\n", g.edge_feat[2 * e], g.edge_feat[2 * e + 1]);
  }
  for (std::int64_t v = 0; v < g.n; ++v) {
    for (std::int64_t c = 0; c < g.f; ++c)
      features += fmt::format("{}{}", c ? "," : "", g.features[v * g.f + c]);
    features += "\n";
    labels += std::isnan(g.labels[v]) ? "nan\n" : fmt::format("{}\n", g.labels[v]);
  }
  gz_write(dir / "raw" / "edge.csv.gz", edges);
  gz_write(dir / "raw" / "edge-feat.csv.gz", edge_feat);
  gz_write(dir / "raw" / "num-node-list.csv.gz", std::to_string(g.n) + "\n");
  gz_write(dir / "raw" / "node-feat.csv.gz", features);
  gz_write(dir / "raw" / "node-label.csv.gz", labels);
  write_split(dir, g.n);
}

struct layout_choice {
  bool deflate = true;
  bool zip64 = false;
  bool fortran_edges = false;
};

void write_binary_layout(const fs::path& dir, const graph_data& g, layout_choice how) {
  const auto edges = static_cast<std::int64_t>(g.src.size());
  std::vector<std::int64_t> edge_index;
  if (how.fortran_edges) {
    for (std::int64_t e = 0; e < edges; ++e)
      edge_index.insert(edge_index.end(), {g.src[e], g.dst[e]});
  } else {
    edge_index = g.src;
    edge_index.insert(edge_index.end(), g.dst.begin(), g.dst.end());
  }
  std::vector<std::uint16_t> half;
  for (const float x : g.features) half.push_back(float_to_half(x));
  zip_writer data(how.deflate, how.zip64);
  data.add("edge_index.npy", npy("<i8", {2, edges}, how.fortran_edges, raw_bytes(edge_index)));
  data.add("edge_feat.npy", npy("<f4", {edges, 2}, false, raw_bytes(g.edge_feat)));
  data.add("node_feat.npy", npy("<f2", {g.n, g.f}, false, raw_bytes(half)));
  data.add("node_year.npy", npy("<i8", {g.n, 1}, false, std::string(8 * g.n, '\0')));
  data.add("num_nodes_list.npy", npy("<i8", {1}, false, raw_bytes(std::vector<std::int64_t>{g.n})));
  data.add("num_edges_list.npy",
           npy("<i8", {1}, false, raw_bytes(std::vector<std::int64_t>{edges})));
  write_file(dir / "raw" / "data.npz", data.finish());
  zip_writer labels(how.deflate, how.zip64);
  labels.add("node_label.npy", npy("<f8", {g.n, 1}, false, raw_bytes(g.labels)));
  write_file(dir / "raw" / "node-label.npz", labels.finish());
  write_split(dir, g.n);
}

template <class A, class B>
void expect_same(const A& got, const B& expected, const char* what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << what << " " << i;
}

void expect_same_dataset(const dataset& got, const dataset& expected) {
  EXPECT_EQ(got.num_nodes(), expected.num_nodes());
  expect_same(got.graph().indptr, expected.graph().indptr, "indptr");
  expect_same(got.graph().indices, expected.graph().indices, "indices");
  expect_same(got.graph().values, expected.graph().values, "edge weights");
  expect_same(got.features().data, expected.features().data, "features");
  expect_same(got.labels(), expected.labels(), "labels");
  EXPECT_EQ(got.num_classes(), expected.num_classes());
  ASSERT_EQ(got.splits().size(), 1u);
  expect_same(got.splits()[0].train, expected.splits()[0].train, "train");
  expect_same(got.splits()[0].test, expected.splits()[0].test, "test");
}

TEST(NpzImport, TheBinaryLayoutImportsAsItsCsvLayout) {
  const scratch_dir dir;
  const auto g = make_graph(60, 400);
  write_csv_layout(dir.path() / "csv", g);
  for (const bool weights : {false, true}) {
    auto options = quiet_as_given;
    if (weights) options.edge_weight_column = 1;
    fs::remove_all(dir.path() / "from-csv");
    import_ogb(dir.path() / "csv", dir.path() / "from-csv", options);
    const auto expected = dataset::open_native(dir.path() / "from-csv");
    EXPECT_EQ(expected.graph().weighted(), weights);
    for (const auto how : {layout_choice{true, false, false}, layout_choice{false, false, false},
                           layout_choice{true, true, false}, layout_choice{false, true, true}}) {
      SCOPED_TRACE(fmt::format("deflate {} zip64 {} fortran {} weights {}", how.deflate, how.zip64,
                               how.fortran_edges, weights));
      const auto binary = dir.path() / "binary";
      fs::remove_all(binary);
      write_binary_layout(binary, g, how);
      const auto out = dir.path() / "from-npz";
      fs::remove_all(out);
      import_ogb(binary, out, options);
      expect_same_dataset(dataset::open_native(out), expected);
    }
  }
}

TEST(NpzImport, EdgesPastOneChunkAreAllRead) {
  const scratch_dir dir;
  const auto g = make_graph(1000, (1 << 20) + 777);
  write_binary_layout(dir.path() / "binary", g, {.deflate = true});
  import_ogb(dir.path() / "binary", dir.path() / "out", quiet_as_given);
  const auto d = dataset::open_native(dir.path() / "out");
  ASSERT_EQ(d.num_edges(), static_cast<std::int64_t>(g.src.size()));
  // The last edge, read from the second chunk of both halves of edge_index.
  const auto row = d.graph().row(static_cast<vertex_t>(g.dst.back()));
  EXPECT_TRUE(std::binary_search(row.begin(), row.end(), static_cast<vertex_t>(g.src.back())));
}

std::string import_error(const fs::path& in, const fs::path& out,
                         const ogb_import_options& options = quiet_as_given) {
  try {
    import_ogb(in, out, options);
  } catch (const data_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NpzImport, BadArchivesNameTheFileAndWhatIsWrong) {
  const scratch_dir dir;
  const auto root = dir.path() / "binary";
  auto g = make_graph(30, 100);
  g.dst[57] = 30;  // outside [0, 30)
  write_binary_layout(root, g, {});
  auto message = import_error(root, dir.path() / "out");
  EXPECT_NE(message.find("data.npz: edge_index.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("edge 57"), std::string::npos) << message;

  g = make_graph(30, 100);
  write_binary_layout(root, g, {});
  // Cut the archive inside its first member: the directory is gone too.
  const auto archive = root / "raw" / "data.npz";
  fs::resize_file(archive, 300);
  message = import_error(root, dir.path() / "out");
  EXPECT_NE(message.find("data.npz"), std::string::npos) << message;

  write_binary_layout(root, g, {});
  message = import_error(root, dir.path() / "out",
                         {.add_inverse_edges = false, .quiet = true, .edge_weight_column = 2});
  EXPECT_NE(message.find("edge_feat.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("2 columns"), std::string::npos) << message;

  // A corrupt deflate stream in the middle of edge_index.
  write_binary_layout(root, g, {.deflate = true});
  std::string bytes;
  {
    std::ifstream in(archive, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (std::size_t i = 120; i < 220; ++i) bytes[i] = static_cast<char>(0xFF);
  write_file(archive, bytes);
  message = import_error(root, dir.path() / "out");
  EXPECT_NE(message.find("edge_index.npy"), std::string::npos) << message;
}

}  // namespace
}  // namespace bulkgnn::data
