#include "bulkgnn/data/ogb_import.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <zlib.h>
#include "scratch_dir.hpp"
#include "test_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;
using bulkgnn::testing::gz_write;
using bulkgnn::testing::write_file;

const fs::path shared_data = BULKGNN_SHARED_DATA;
const ogb_import_options quiet{
    .add_inverse_edges = std::nullopt, .quiet = true, .edge_weight_column = std::nullopt};

// An independent reader (gzgets, not the importer's line splitter) as oracle.
std::vector<std::string> gz_read_lines(const fs::path& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  EXPECT_NE(gz, nullptr) << path;
  std::vector<std::string> lines;
  std::vector<char> buffer(1 << 20);
  while (gz != nullptr && gzgets(gz, buffer.data(), static_cast<int>(buffer.size())) != nullptr) {
    std::string line(buffer.data());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    lines.push_back(line);
  }
  if (gz != nullptr) gzclose(gz);
  return lines;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::pair<vertex_t, vertex_t> parse_edge_line(const std::string& line) {
  const auto comma = line.find(',');
  return {std::stoi(line.substr(0, comma)), std::stoi(line.substr(comma + 1))};
}

bool has_entry(const csr_view& g, vertex_t row, vertex_t col) {
  const auto r = g.row(row);
  return std::binary_search(r.begin(), r.end(), col);
}

using bulkgnn::testing::scratch_dir;

// Imports one of the shared real datasets and checks it against its meta.json.
class real_dataset_test : public ::testing::Test {
 protected:
  dataset import(const std::string& name, ogb_import_options options = quiet) {
    source_ = shared_data / name;
    if (!fs::is_directory(source_))
      throw std::runtime_error("shared dataset missing: " + source_.string() +
                               " (set BULKGNN_SHARED_DATA)");
    meta_ = nlohmann::json::parse(std::ifstream(source_ / "meta.json"));
    import_ogb(source_, scratch_.path() / name, options);
    return dataset::open_native(scratch_.path() / name);
  }

  void expect_matches_meta(const dataset& d, bool inverse) {
    EXPECT_EQ(d.name(), meta_["name"]);
    EXPECT_EQ(d.num_nodes(), meta_["num_nodes"].get<std::int64_t>());
    EXPECT_EQ(d.num_edges(), meta_["num_edges"].get<std::int64_t>() * (inverse ? 2 : 1));
    EXPECT_EQ(d.features().cols, meta_["num_features"].get<std::int64_t>());
    EXPECT_EQ(d.num_classes(), meta_["num_classes"].get<int>());
    EXPECT_EQ(d.labels().size(), meta_["num_classes"] == 0 ? 0u : d.num_nodes());
    ASSERT_EQ(d.splits().size(), meta_["splits"].size());
    for (std::size_t i = 0; i < d.splits().size(); ++i) {
      const auto& s = d.splits()[i];
      EXPECT_EQ(s.name, meta_["splits"][i]);
      for (auto [part, ids] : {std::pair{"train", s.train}, {"valid", s.valid}, {"test", s.test}}) {
        const auto lines =
            gz_read_lines(source_ / "split" / s.name / fmt::format("{}.csv.gz", part));
        ASSERT_EQ(ids.size(), lines.size()) << part;
        for (std::size_t k = 0; k < ids.size(); ++k) ASSERT_EQ(ids[k], std::stoi(lines[k]));
      }
    }
    EXPECT_EQ(d.manifest()["add_inverse_edge"], inverse);
    EXPECT_NO_THROW(d.validate());
  }

  // Every raw edge "src,dst" is an in-neighbour src of row dst.
  void expect_every_raw_edge_present(const dataset& d) {
    const auto lines = gz_read_lines(source_ / "raw" / "edge.csv.gz");
    ASSERT_EQ(static_cast<std::int64_t>(lines.size()), meta_["num_edges"].get<std::int64_t>());
    for (const auto& line : lines) {
      const auto [src, dst] = parse_edge_line(line);
      ASSERT_TRUE(has_entry(d.graph(), dst, src)) << line;
    }
  }

  static void expect_rows_sorted(const dataset& d) {
    for (std::int64_t v = 0; v < d.num_nodes(); ++v) {
      const auto r = d.graph().row(v);
      ASSERT_TRUE(std::is_sorted(r.begin(), r.end())) << "row " << v;
    }
  }

  scratch_dir scratch_;
  fs::path source_;
  nlohmann::json meta_;
};

TEST_F(real_dataset_test, CoraMatchesItsMetaAndRawFiles) {
  const auto d = import("cora");
  expect_matches_meta(d, true);
  EXPECT_EQ(d.num_edges(), 10556);  // PyG's Planetoid count, quoted in the data README
  const auto& split = d.find_split("public");
  EXPECT_EQ(split.train.size(), 140u);
  EXPECT_EQ(split.valid.size(), 500u);
  EXPECT_EQ(split.test.size(), 1000u);
  expect_rows_sorted(d);
  expect_every_raw_edge_present(d);
  const auto g = d.graph();
  for (vertex_t v = 0; v < d.num_nodes(); ++v)
    for (const vertex_t u : g.row(v)) ASSERT_TRUE(has_entry(g, u, v)) << v << " " << u;

  const auto labels = gz_read_lines(source_ / "raw" / "node-label.csv.gz");
  ASSERT_EQ(labels.size(), d.labels().size());
  for (std::size_t v = 0; v < labels.size(); ++v) ASSERT_EQ(d.labels()[v], std::stoi(labels[v]));
  const auto features = gz_read_lines(source_ / "raw" / "node-feat.csv.gz");
  ASSERT_EQ(static_cast<std::int64_t>(features.size()), d.num_nodes());
  for (const std::int64_t v : {std::int64_t{0}, d.num_nodes() / 2, d.num_nodes() - 1}) {
    std::istringstream row(features[v]);
    std::string field;
    for (std::int64_t j = 0; std::getline(row, field, ','); ++j)
      ASSERT_EQ(d.features().row(v)[j], std::stof(field)) << v << "," << j;
  }
}

TEST_F(real_dataset_test, OptionOverridesMetaInverseEdges) {
  const auto d = import(
      "cora", {.add_inverse_edges = false, .quiet = true, .edge_weight_column = std::nullopt});
  EXPECT_EQ(d.num_edges(), meta_["num_edges"].get<std::int64_t>());
  expect_every_raw_edge_present(d);
}

TEST_F(real_dataset_test, FacebookMatchesItsMeta) {
  const auto d = import("facebook");
  expect_matches_meta(d, true);
  expect_rows_sorted(d);
  expect_every_raw_edge_present(d);
}

TEST_F(real_dataset_test, SlashdotStaysDirected) {
  const auto d = import("soc-slashdot0902");
  expect_matches_meta(d, false);
  EXPECT_TRUE(d.features().empty());
  EXPECT_TRUE(d.labels().empty());
  expect_rows_sorted(d);
  expect_every_raw_edge_present(d);
  // Not every edge is reciprocated in the source, so no inverse was added.
  const auto g = d.graph();
  bool one_way = false;
  for (vertex_t v = 0; v < d.num_nodes() && !one_way; ++v)
    for (const vertex_t u : g.row(v)) one_way = one_way || !has_entry(g, u, v);
  EXPECT_TRUE(one_way);
}

TEST(ogb_open_test, OpeningARawDirEqualsImportThenOpenNative) {
  const fs::path cora = shared_data / "cora";
  ASSERT_TRUE(fs::is_directory(cora)) << "shared dataset missing: " << cora;
  const scratch_dir scratch;
  const fs::path tmpdir = scratch.path() / "tmp";
  fs::create_directories(tmpdir);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  const auto direct = dataset::open(cora);
  if (old_tmpdir != nullptr)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmpdir)) << "the temporary import must be removed";

  import_ogb(cora, scratch.path() / "native", quiet);
  const auto native = dataset::open_native(scratch.path() / "native");
  EXPECT_EQ(direct.name(), native.name());
  const auto same = [](auto a, auto b) { return std::ranges::equal(a, b); };
  EXPECT_TRUE(same(direct.graph().indptr, native.graph().indptr));
  EXPECT_TRUE(same(direct.graph().indices, native.graph().indices));
  EXPECT_TRUE(same(direct.features().data, native.features().data));
  EXPECT_TRUE(same(direct.labels(), native.labels()));
  ASSERT_EQ(direct.splits().size(), native.splits().size());
  EXPECT_TRUE(same(direct.splits()[0].test, native.splits()[0].test));
  EXPECT_EQ(direct.num_classes(), native.num_classes());
}

// A tiny valid OGB directory that each bad-input case breaks in one place.
class bad_input_test : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = scratch_.path() / "ogb";
    out_ = scratch_.path() / "out";
    gz_write(in_ / "raw" / "num-node-list.csv.gz", "4\n");
    gz_write(in_ / "raw" / "num-edge-list.csv.gz", "3\n");
    gz_write(in_ / "raw" / "edge.csv.gz", "0,1\n1,2\n2,3\n");
    gz_write(in_ / "raw" / "node-feat.csv.gz", "0.5,1\n1,2\n-3e-2,4\n5,6\n");
    gz_write(in_ / "raw" / "node-label.csv.gz", "0\n1\nnan\n2\n");
    gz_write(in_ / "split" / "a" / "train.csv.gz", "0\n1\n");
    gz_write(in_ / "split" / "a" / "valid.csv.gz", "2\n");
    gz_write(in_ / "split" / "a" / "test.csv.gz", "3\n");
  }

  // Expects a data_error naming `file` (and "file:line:" when line > 0),
  // containing `fragment`, and no output left behind.
  void expect_error(const std::string& file, int line, const std::string& fragment) {
    try {
      import_ogb(in_, out_, quiet);
      ADD_FAILURE() << "no error, expected one about " << file;
    } catch (const data_error& e) {
      const std::string what = e.what();
      const std::string where = line > 0 ? fmt::format("{}:{}:", file, line) : file;
      EXPECT_NE(what.find(where), std::string::npos) << what << "\nexpected " << where;
      EXPECT_NE(what.find(fragment), std::string::npos) << what << "\nexpected " << fragment;
    }
    EXPECT_FALSE(fs::exists(out_));
    EXPECT_EQ(std::distance(fs::directory_iterator(scratch_.path()), fs::directory_iterator()), 1)
        << "temporary output left behind";
  }
  void rewrite(const std::string& relative, const std::string& text) {
    gz_write(in_ / relative, text);
  }

  scratch_dir scratch_;
  fs::path in_;
  fs::path out_;
};

TEST_F(bad_input_test, TheUnbrokenInputImports) {
  import_ogb(in_, out_, quiet);
  const auto d = dataset::open_native(out_);
  EXPECT_EQ(d.num_nodes(), 4);
  EXPECT_EQ(d.num_edges(), 3);
  EXPECT_EQ(d.graph().row(1).size(), 1u);
  EXPECT_EQ(d.graph().row(1)[0], 0) << "row dst holds src";
  EXPECT_EQ(d.graph().degree(0), 0);
  EXPECT_EQ(d.features().cols, 2);
  EXPECT_EQ(d.features().row(2)[0], -0.03f);
  EXPECT_EQ(d.labels()[2], -1) << "nan means unlabelled";
  EXPECT_EQ(d.num_classes(), 3);
  EXPECT_EQ(d.find_split("a").train.size(), 2u);
  EXPECT_EQ(d.name(), "ogb");
}

TEST_F(bad_input_test, InverseEdgesFillBothRows) {
  import_ogb(in_, out_,
             {.add_inverse_edges = true, .quiet = true, .edge_weight_column = std::nullopt});
  const auto d = dataset::open_native(out_);
  EXPECT_EQ(d.num_edges(), 6);
  const auto row = d.graph().row(1);
  EXPECT_EQ(std::vector<vertex_t>(row.begin(), row.end()), (std::vector<vertex_t>{0, 2}));
}

TEST_F(bad_input_test, EdgeRowWithThreeFields) {
  rewrite("raw/edge.csv.gz", "0,1\n1,2,3\n2,3\n");
  expect_error("edge.csv.gz", 2, "found 3");
}

TEST_F(bad_input_test, EdgeRowWithOneField) {
  rewrite("raw/edge.csv.gz", "0,1\n1\n2,3\n");
  expect_error("edge.csv.gz", 2, "found 1");
}

TEST_F(bad_input_test, NonNumericEdgeField) {
  rewrite("raw/edge.csv.gz", "0,1\n1,x\n2,3\n");
  expect_error("edge.csv.gz", 2, "'x' is not an integer");
}

TEST_F(bad_input_test, EdgeIdOutOfRange) {
  rewrite("raw/edge.csv.gz", "0,1\n1,2\n4,3\n");
  expect_error("edge.csv.gz", 3, "node id 4 is outside [0, 4)");
}

TEST_F(bad_input_test, NegativeEdgeId) {
  rewrite("raw/edge.csv.gz", "0,1\n-1,2\n2,3\n");
  expect_error("edge.csv.gz", 2, "outside");
}

TEST_F(bad_input_test, EdgeCountDisagreesWithEdgeList) {
  rewrite("raw/num-edge-list.csv.gz", "5\n");
  expect_error("num-edge-list.csv.gz", 1, "edge.csv.gz has 3 lines");
}

TEST_F(bad_input_test, NodeCountNotANumber) {
  rewrite("raw/num-node-list.csv.gz", "four\n");
  expect_error("num-node-list.csv.gz", 1, "not an integer");
}

TEST_F(bad_input_test, NodeCountFileMissing) {
  fs::remove(in_ / "raw" / "num-node-list.csv.gz");
  expect_error("num-node-list.csv.gz", 0, "missing");
}

TEST_F(bad_input_test, NanFeature) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,nan\n0,4\n5,6\n");
  expect_error("node-feat.csv.gz", 2, "not a finite float");
}

TEST_F(bad_input_test, InfiniteFeature) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2\n0,4\n-inf,6\n");
  expect_error("node-feat.csv.gz", 4, "not a finite float");
}

TEST_F(bad_input_test, FeatureBeyondFloatRange) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2\n0,1e300\n5,6\n");
  expect_error("node-feat.csv.gz", 3, "not a finite float");
}

TEST_F(bad_input_test, NonNumericFeature) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2x\n0,4\n5,6\n");
  expect_error("node-feat.csv.gz", 2, "'2x' is not a number");
}

TEST_F(bad_input_test, FeatureRowTooWide) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2\n0,4,7\n5,6\n");
  expect_error("node-feat.csv.gz", 3, "has 3 fields, expected 2");
}

TEST_F(bad_input_test, FeatureRowTooNarrow) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1\n0,4\n5,6\n");
  expect_error("node-feat.csv.gz", 2, "has 1 fields, expected 2");
}

TEST_F(bad_input_test, FewerFeatureRowsThanNodes) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2\n0,4\n");
  expect_error("node-feat.csv.gz", 0, "has 3 rows but num-node-list.csv.gz says 4");
}

TEST_F(bad_input_test, MoreFeatureRowsThanNodes) {
  rewrite("raw/node-feat.csv.gz", "0.5,1\n1,2\n0,4\n5,6\n7,8\n");
  expect_error("node-feat.csv.gz", 5, "more rows");
}

TEST_F(bad_input_test, NegativeLabel) {
  rewrite("raw/node-label.csv.gz", "0\n1\n-2\n2\n");
  expect_error("node-label.csv.gz", 3, "negative label");
}

TEST_F(bad_input_test, NonNumericLabel) {
  rewrite("raw/node-label.csv.gz", "0\n1\ncat\n2\n");
  expect_error("node-label.csv.gz", 3, "not a class label");
}

TEST_F(bad_input_test, FractionalLabel) {
  rewrite("raw/node-label.csv.gz", "0\n1.5\n1\n2\n");
  expect_error("node-label.csv.gz", 2, "not a class label");
}

TEST_F(bad_input_test, LabelBeyondMetaClassCount) {
  write_file(in_ / "meta.json", R"({"name": "tiny", "num_classes": 2})");
  expect_error("node-label.csv.gz", 4, "not below num_classes = 2");
}

TEST_F(bad_input_test, LabelRowsDisagreeWithNodeCount) {
  rewrite("raw/node-label.csv.gz", "0\n1\n2\n");
  expect_error("node-label.csv.gz", 0, "has 3 rows but num-node-list.csv.gz says 4");
}

TEST_F(bad_input_test, SplitLacksTestFile) {
  fs::remove(in_ / "split" / "a" / "test.csv.gz");
  expect_error("test.csv.gz", 0, "missing");
}

TEST_F(bad_input_test, SplitIdOutOfRange) {
  rewrite("split/a/valid.csv.gz", "2\n7\n");
  expect_error("valid.csv.gz", 2, "node id 7 is outside [0, 4)");
}

TEST_F(bad_input_test, BadInverseEdgeFlagInMeta) {
  write_file(in_ / "meta.json", R"({"add_inverse_edge": "sometimes"})");
  expect_error("meta.json", 0, "add_inverse_edge");
}

// Enough lines that the compressed stream spans many bytes.
std::string many_edges() {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += fmt::format("{},{}\n", i % 4, (i * 7 + 1) % 4);
  return text;
}

TEST_F(bad_input_test, GzipMissingItsTrailer) {
  rewrite("raw/edge.csv.gz", many_edges());
  rewrite("raw/num-edge-list.csv.gz", "20000\n");
  const auto bytes = read_file(in_ / "raw" / "edge.csv.gz");
  write_file(in_ / "raw" / "edge.csv.gz", bytes.substr(0, bytes.size() - 4));
  expect_error("edge.csv.gz", 20001, "truncated");
}

TEST_F(bad_input_test, GzipCutInTheMiddle) {
  rewrite("raw/edge.csv.gz", many_edges());
  rewrite("raw/num-edge-list.csv.gz", "20000\n");
  const auto bytes = read_file(in_ / "raw" / "edge.csv.gz");
  write_file(in_ / "raw" / "edge.csv.gz", bytes.substr(0, bytes.size() / 2));
  expect_error("edge.csv.gz", 0, "truncated");
}

TEST_F(bad_input_test, GarbledGzipBlockHeader) {
  auto bytes = read_file(in_ / "raw" / "edge.csv.gz");
  bytes[10] = static_cast<char>(0xff);  // first deflate block: reserved type 3
  write_file(in_ / "raw" / "edge.csv.gz", bytes);
  expect_error("edge.csv.gz", 1, "corrupt gzip data");
}

TEST_F(bad_input_test, GarbledGzipData) {
  rewrite("raw/edge.csv.gz", many_edges());
  auto bytes = read_file(in_ / "raw" / "edge.csv.gz");
  for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + 8; ++i) bytes[i] ^= 0x5a;
  write_file(in_ / "raw" / "edge.csv.gz", bytes);
  expect_error("edge.csv.gz:", 0, "");
}

// Concatenated members are one gzip file (`cat a.gz b.gz`, pigz -i): read whole.
TEST_F(bad_input_test, ConcatenatedGzipMembersReadAsOneFile) {
  rewrite("raw/edge.csv.gz", "0,1\n1,2\n");
  const auto first = read_file(in_ / "raw" / "edge.csv.gz");
  rewrite("raw/edge.csv.gz", "2,3\n");
  write_file(in_ / "raw" / "edge.csv.gz", first + read_file(in_ / "raw" / "edge.csv.gz"));
  import_ogb(in_, out_, quiet);
  EXPECT_EQ(dataset::open_native(out_).num_edges(), 3);
}

// zlib's gzread would silently drop what follows the last member.
TEST_F(bad_input_test, GzipWithTrailingGarbage) {
  write_file(in_ / "raw" / "edge.csv.gz", read_file(in_ / "raw" / "edge.csv.gz") + "junk");
  expect_error("edge.csv.gz", 4, "trailing garbage after the gzip data");
}

TEST_F(bad_input_test, PlainTextNamedGz) {
  write_file(in_ / "raw" / "node-label.csv.gz", "0\n1\n2\n3\n");
  expect_error("node-label.csv.gz", 0, "not a gzip file");
}

TEST_F(bad_input_test, NotAnOgbDirectory) {
  fs::remove(in_ / "raw" / "edge.csv.gz");
  EXPECT_FALSE(is_ogb_raw_dir(in_));
  expect_error("edge.csv.gz", 0, "missing");
}

}  // namespace
}  // namespace bulkgnn::data
