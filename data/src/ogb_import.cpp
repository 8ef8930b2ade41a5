#include "bulkgnn/data/ogb_import.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/input_file.hpp"
#include "bulkgnn/core/interrupt.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "gz_lines.hpp"
#include "native_format.hpp"
#include "npz_member.hpp"

#include <fmt/ranges.h>

#include <optional>

namespace bulkgnn::data {

namespace {

namespace fs = std::filesystem;
using detail::gz_lines;

constexpr std::int64_t progress_every = 1 << 16;
// Feature rows are wide (thousands of values each): look for SIGINT/SIGTERM
// more often than the progress bar moves, so that a stop comes within ~0.1 s.
constexpr std::int64_t feature_rows_between_interrupt_checks = 256;

// Where each file of the OGB node-property raw layout lives.
struct ogb_layout {
  fs::path dir;
  [[nodiscard]] fs::path raw(const char* name) const { return dir / "raw" / name; }
  [[nodiscard]] fs::path meta() const { return dir / "meta.json"; }
  [[nodiscard]] fs::path splits() const { return dir / "split"; }
};

// What the edge passes learn about the graph.
struct edge_summary {
  std::int64_t lines = 0;
  edge_t stored = 0;
};

std::int64_t parse_int(std::string_view field, const gz_lines& in) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || end != field.data() + field.size())
    in.fail(fmt::format("'{}' is not an integer", field));
  return v;
}

vertex_t parse_node(std::string_view field, const gz_lines& in, std::int64_t n) {
  const std::int64_t v = parse_int(field, in);
  if (v < 0 || v >= n) in.fail(fmt::format("node id {} is outside [0, {})", v, n));
  return static_cast<vertex_t>(v);
}

std::pair<vertex_t, vertex_t> parse_edge(std::string_view line, const gz_lines& in,
                                         std::int64_t n) {
  const auto comma = line.find(',');
  const auto fields = std::count(line.begin(), line.end(), ',') + 1;
  if (fields != 2) in.fail(fmt::format("expected 2 comma-separated fields, found {}", fields));
  return {parse_node(line.substr(0, comma), in, n), parse_node(line.substr(comma + 1), in, n)};
}

std::int64_t read_count(const fs::path& path) {
  gz_lines in(path);
  std::string_view line;
  if (!in.next(line)) in.fail("empty, expected one number");
  const std::int64_t v = parse_int(line, in);
  if (v < 0) in.fail(fmt::format("negative count {}", v));
  if (in.next(line)) in.fail("expected a single line (one graph)");
  return v;
}

std::int64_t read_node_count(const fs::path& path) {
  const std::int64_t n = read_count(path);
  if (n > std::numeric_limits<vertex_t>::max())
    throw data_error(path.string(), 1, fmt::format("{} nodes do not fit 32-bit node ids", n));
  return n;
}

nlohmann::json read_meta(const fs::path& path) {
  if (const auto reason = not_a_regular_file(path); !reason.empty())
    throw data_error(path.string(), reason);
  if (!fs::exists(path)) return nlohmann::json::object();
  std::ifstream in(path);
  try {
    auto meta = nlohmann::json::parse(in);
    if (!meta.is_object()) throw data_error(path.string(), "is not a JSON object");
    return meta;
  } catch (const nlohmann::json::parse_error& e) {
    throw data_error(path.string(), fmt::format("invalid JSON: {}", e.what()));
  }
}

// OGB's master.csv writes "True"/"False"; our meta.json writes booleans.
bool meta_add_inverse(const nlohmann::json& meta, const fs::path& path) {
  if (!meta.contains("add_inverse_edge")) return false;
  const auto& v = meta["add_inverse_edge"];
  if (v.is_boolean()) return v.get<bool>();
  if (v == "True" || v == "true") return true;
  if (v == "False" || v == "false") return false;
  throw data_error(path.string(), "\"add_inverse_edge\" is neither true nor false");
}

// meta.json's "num_nodes", where present, must agree with num-node-list.csv.gz.
void check_meta_node_count(const nlohmann::json& meta, const fs::path& path, std::int64_t n) {
  if (!meta.contains("num_nodes")) return;
  const auto& v = meta["num_nodes"];
  if (!v.is_number_integer()) throw data_error(path.string(), "\"num_nodes\" is not an integer");
  if (v.get<std::int64_t>() != n)
    throw data_error(path.string(),
                     fmt::format("\"num_nodes\" is {} but raw/num-node-list.csv.gz says {}",
                                 v.get<std::int64_t>(), n));
}

// One field of a comma-separated line as a finite float.
float parse_weight(std::string_view line, int column, const gz_lines& in) {
  std::size_t start = 0;
  for (int c = 0; c < column; ++c) {
    start = line.find(',', start);
    if (start == std::string_view::npos)
      in.fail(fmt::format("has no column {} (--edge-weight-column)", column));
    ++start;
  }
  const auto field = line.substr(start, line.find(',', start) - start);
  float v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(v))
    in.fail(fmt::format("column {}: '{}' is not a finite float", column, field));
  return v;
}

// The edges of raw/edge.csv.gz, "src,dst" per line; with a weight column,
// each edge's weight is that column of the same line of raw/edge-feat.csv.gz.
class csv_edge_source {
 public:
  csv_edge_source(const ogb_layout& ogb, std::int64_t n, std::optional<int> weight_column,
                  bool quiet)
      : path_(ogb.raw("edge.csv.gz")),
        weights_(ogb.raw("edge-feat.csv.gz")),
        counts_(ogb.raw("num-edge-list.csv.gz")),
        n_(n),
        weight_column_(weight_column),
        quiet_(quiet) {
    if (weight_column_ && !fs::exists(weights_))
      throw data_error(weights_.string(), "missing: --edge-weight-column needs edge features");
  }
  [[nodiscard]] bool weighted() const { return weight_column_.has_value(); }
  [[noreturn]] void fail(const std::string& reason) const {
    throw data_error(path_.string(), reason);
  }

  // Calls f(src, dst, weight) per edge (weight 1 without a weight column);
  // returns the edge count.
  template <class F>
  std::int64_t for_each(const char* label, F&& f) const {
    gz_lines in(path_);
    std::optional<gz_lines> weights;
    if (weight_column_) weights.emplace(weights_);
    const auto bytes = static_cast<std::int64_t>(fs::file_size(path_));
    progress bar(label, bytes, " B", quiet_);
    std::string_view line, weight_line;
    std::int64_t lines = 0;
    while (in.next(line)) {
      const auto [src, dst] = parse_edge(line, in, n_);
      float w = 1;
      if (weights) {
        if (!weights->next(weight_line))
          weights->fail(fmt::format("has {} lines, fewer than edge.csv.gz", lines));
        w = parse_weight(weight_line, *weight_column_, *weights);
      }
      f(src, dst, w);
      if (++lines % progress_every == 0) {
        bar.update(in.compressed_offset());
        throw_if_interrupted();
      }
    }
    if (weights && weights->next(weight_line))
      weights->fail(fmt::format("has more lines than the {} of edge.csv.gz", lines));
    bar.update(bytes);
    bar.finish();
    check_count(lines);
    return lines;
  }

 private:
  void check_count(std::int64_t lines) const {
    if (!fs::exists(counts_)) return;
    const std::int64_t expected = read_count(counts_);
    if (expected != lines)
      throw data_error(counts_.string(), 1,
                       fmt::format("says {} edges but edge.csv.gz has {} lines", expected, lines));
  }

  fs::path path_;
  fs::path weights_;
  fs::path counts_;
  std::int64_t n_;
  std::optional<int> weight_column_;
  bool quiet_;
};

// The edges of raw/data.npz's edge_index (2 × E, either order), read in
// chunks; with a weight column, each edge's weight is that column of
// edge_feat (E × k).
class npz_edge_source {
 public:
  npz_edge_source(const fs::path& archive, std::int64_t n, std::optional<int> weight_column,
                  bool quiet)
      : edges_(archive, "edge_index"), n_(n), weight_column_(weight_column), quiet_(quiet) {
    const auto& shape = edges_.header().shape;
    if (shape.size() != 2 || shape[0] != 2)
      fail(fmt::format("has shape ({}), expected (2, number of edges)", fmt::join(shape, ", ")));
    count_ = shape[1];
    if (!weight_column_) return;
    if (!npz_member::exists(archive, "edge_feat"))
      throw data_error(archive.string(), "missing: --edge-weight-column needs member edge_feat");
    weights_.emplace(archive, "edge_feat");
    const auto& w = weights_->header().shape;
    const std::int64_t columns = w.size() == 1 ? 1 : (w.size() == 2 ? w[1] : -1);
    if (columns < 0 || w[0] != count_ || weights_->header().fortran_order)
      throw data_error(weights_->where(), fmt::format("has shape ({}), expected ({}, k) in C order",
                                                      fmt::join(w, ", "), count_));
    if (*weight_column_ >= columns)
      throw data_error(weights_->where(), fmt::format("has {} columns; --edge-weight-column is {}",
                                                      columns, *weight_column_));
    weight_columns_ = columns;
  }
  [[nodiscard]] bool weighted() const { return weight_column_.has_value(); }
  [[noreturn]] void fail(const std::string& reason) const {
    throw data_error(edges_.where(), reason);
  }

  template <class F>
  std::int64_t for_each(const char* label, F&& f) const {
    constexpr std::int64_t chunk = 1 << 20;
    const bool interleaved = edges_.header().fortran_order;  // (src, dst) pairs
    auto sources = edges_.reader(0);
    std::optional<npz_reader> destinations;
    if (!interleaved) destinations.emplace(edges_.reader(count_));
    std::optional<npz_reader> weights;
    if (weights_) weights.emplace(weights_->reader(0));
    std::vector<std::int64_t> src, dst, pairs;
    std::vector<float> features;
    progress bar(label, count_, " edges", quiet_);
    for (std::int64_t first = 0; first < count_; first += chunk) {
      const auto size = static_cast<std::size_t>(std::min(chunk, count_ - first));
      if (interleaved) {
        pairs.resize(2 * size);
        sources.read_integers(edges_.header().descr, pairs);
      } else {
        src.resize(size);
        dst.resize(size);
        sources.read_integers(edges_.header().descr, src);
        destinations->read_integers(edges_.header().descr, dst);
      }
      if (weights) {
        features.resize(size * static_cast<std::size_t>(weight_columns_));
        weights->read_floats(weights_->header().descr, features);
      }
      for (std::size_t i = 0; i < size; ++i) {
        const auto s = interleaved ? pairs[2 * i] : src[i];
        const auto d = interleaved ? pairs[2 * i + 1] : dst[i];
        const auto edge = first + static_cast<std::int64_t>(i);
        if (s < 0 || s >= n_ || d < 0 || d >= n_)
          fail(fmt::format("edge {}: ({}, {}) has a node outside [0, {})", edge, s, d, n_));
        float w = 1;
        if (weights) {
          w = features[i * static_cast<std::size_t>(weight_columns_) +
                       static_cast<std::size_t>(*weight_column_)];
          if (!std::isfinite(w))
            throw data_error(weights_->where(),
                             fmt::format("edge {}: weight {} is not finite", edge, w));
        }
        f(static_cast<vertex_t>(s), static_cast<vertex_t>(d), w);
      }
      bar.update(first + static_cast<std::int64_t>(size));
      throw_if_interrupted();
    }
    bar.finish();
    return count_;
  }

 private:
  npz_member edges_;
  std::optional<npz_member> weights_;
  std::int64_t count_ = 0;
  std::int64_t n_;
  std::optional<int> weight_column_;
  std::int64_t weight_columns_ = 0;
  bool quiet_;
};

// Row v of the CSR holds the in-neighbours of v: edge "src,dst" puts src into
// row dst. Two passes keep memory at the output arrays: count row lengths into
// indptr, then fill indices (and weights) through per-row cursors.
template <class Source>
edge_summary import_edges(const Source& edges, std::int64_t n, bool inverse, native_writer& w) {
  const npy_array indptr_array = w.create("indptr.npy", dtype::int64, {n + 1});
  const auto indptr = indptr_array.as<edge_t>();
  edge_summary s;
  s.lines = edges.for_each("edges, pass 1/2", [&](vertex_t src, vertex_t dst, float) {
    ++indptr[dst + 1];
    if (inverse) ++indptr[src + 1];
  });
  for (std::int64_t v = 0; v < n; ++v) indptr[v + 1] += indptr[v];
  s.stored = indptr[n];

  const npy_array indices_array = w.create("indices.npy", dtype::int32, {s.stored});
  const auto indices = indices_array.as<vertex_t>();
  npy_array weight_array;
  std::span<float> weights;
  if (edges.weighted()) {
    weight_array = w.create("edge_weight.npy", dtype::float32, {s.stored});
    weights = weight_array.as<float>();
  }
  // indptr[v] serves as row v's cursor and ends at the row's end.
  const auto place = [&](vertex_t row, vertex_t col, float weight) {
    const edge_t at = indptr[row]++;
    if (at >= s.stored) edges.fail("changed between the two passes");
    indices[at] = col;
    if (!weights.empty()) weights[at] = weight;
  };
  const auto lines =
      edges.for_each("edges, pass 2/2", [&](vertex_t src, vertex_t dst, float weight) {
        place(dst, src, weight);
        if (inverse) place(src, dst, weight);
      });
  if (lines != s.lines) edges.fail("changed between the two passes");
  std::copy_backward(indptr.begin(), indptr.end() - 1, indptr.end());
  indptr[0] = 0;
  detail::sort_rows(indptr, indices, weights);
  return s;
}

// Parses one comma-separated row of exactly out.size() finite floats.
void parse_feature_row(std::string_view line, std::span<float> out, const gz_lines& in) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const auto width = static_cast<std::int64_t>(out.size());
  const auto wrong_width = [&] {
    in.fail(fmt::format("has {} fields, expected {} (the width of line 1)",
                        std::count(line.begin(), line.end(), ',') + 1, width));
  };
  for (std::int64_t j = 0; j < width; ++j) {
    const auto [q, ec] = std::from_chars(p, end, out[j]);
    const bool at_separator = q == end || *q == ',';
    if (ec == std::errc::invalid_argument || !at_separator) {
      const auto field = std::string_view(p, end).substr(0, std::string_view(p, end).find(','));
      in.fail(fmt::format("field {}: '{}' is not a number", j + 1, field));
    }
    if (ec == std::errc::result_out_of_range || !std::isfinite(out[j]))
      in.fail(fmt::format("field {}: '{}' is not a finite float", j + 1, std::string_view(p, q)));
    if ((q == end) != (j + 1 == width)) wrong_width();
    p = q + 1;
  }
}

std::int64_t import_features(const fs::path& path, std::int64_t n, bool quiet, native_writer& w) {
  gz_lines in(path);
  std::string_view line;
  if (!in.next(line)) in.fail("empty file");
  const std::int64_t width = std::count(line.begin(), line.end(), ',') + 1;
  const npy_array array = w.create("features.npy", dtype::float32, {n, width});
  const auto features = array.as<float>();
  progress bar("node features", n, " rows", quiet);
  std::int64_t row = 0;
  do {
    if (row == n) in.fail(fmt::format("more rows than the {} nodes of num-node-list.csv.gz", n));
    parse_feature_row(line, features.subspan(row * width, width), in);
    if (++row % feature_rows_between_interrupt_checks == 0) throw_if_interrupted();
    if (row % progress_every == 0) bar.update(row);
  } while (in.next(line));
  if (row != n)
    throw data_error(path.string(),
                     fmt::format("has {} rows but num-node-list.csv.gz says {} nodes", row, n));
  bar.update(row);
  bar.finish();
  return width;
}

// A class id, or -1 for OGB's "nan" (unlabelled node). Integral floats such as
// "3.0" are accepted because pandas writes float columns that way.
std::int32_t parse_label(std::string_view field, const gz_lines& in) {
  const char* const end = field.data() + field.size();
  std::int64_t v = 0;
  if (const auto [p, ec] = std::from_chars(field.data(), end, v); ec != std::errc() || p != end) {
    double x = 0;
    const auto [q, fec] = std::from_chars(field.data(), end, x);
    if (fec == std::errc() && q == end && std::isnan(x)) return -1;
    if (fec != std::errc() || q != end || x != std::floor(x) || !(std::abs(x) < 1e18))
      in.fail(fmt::format("'{}' is not a class label (a non-negative integer or nan)", field));
    v = static_cast<std::int64_t>(x);
  }
  if (v < 0) in.fail(fmt::format("negative label {}", v));
  if (v >= std::numeric_limits<std::int32_t>::max())
    in.fail(fmt::format("label {} is out of range", v));
  return static_cast<std::int32_t>(v);
}

// Returns num_classes (largest label + 1).
int import_labels(const fs::path& path, std::int64_t n, std::int64_t meta_classes,
                  native_writer& w) {
  gz_lines in(path);
  const npy_array array = w.create("labels.npy", dtype::int32, {n});
  const auto labels = array.as<std::int32_t>();
  std::int32_t largest = -1;
  std::int64_t row = 0;
  std::string_view line;
  while (in.next(line)) {
    if (row == n) in.fail(fmt::format("more rows than the {} nodes of num-node-list.csv.gz", n));
    const std::int32_t label = parse_label(line, in);
    if (meta_classes > 0 && label >= meta_classes)
      in.fail(
          fmt::format("label {} is not below num_classes = {} of meta.json", label, meta_classes));
    labels[row++] = label;
    largest = std::max(largest, label);
    if (row % progress_every == 0) throw_if_interrupted();
  }
  if (row != n)
    throw data_error(path.string(),
                     fmt::format("has {} rows but num-node-list.csv.gz says {} nodes", row, n));
  return largest + 1;
}

// raw/data.npz's num_nodes_list: one graph's node count.
std::int64_t npz_node_count(const fs::path& archive) {
  const npz_member count(archive, "num_nodes_list");
  if (count.elements() != 1)
    throw data_error(count.where(), fmt::format("has {} values, expected one graph's node count",
                                                count.elements()));
  std::int64_t n = 0;
  count.reader().read_integers(count.header().descr, std::span(&n, 1));
  if (n < 0 || n > std::numeric_limits<vertex_t>::max())
    throw data_error(count.where(), fmt::format("{} nodes do not fit 32-bit node ids", n));
  return n;
}

// raw/data.npz's node_feat (n × f, C order) as float32, in chunks of rows.
std::int64_t import_npz_features(const fs::path& archive, std::int64_t n, bool quiet,
                                 native_writer& w) {
  const npz_member member(archive, "node_feat");
  const auto& shape = member.header().shape;
  if (shape.size() != 2 || shape[0] != n || member.header().fortran_order)
    throw data_error(member.where(), fmt::format("has shape ({}), expected ({}, features) in C "
                                                 "order",
                                                 fmt::join(shape, ", "), n));
  const std::int64_t width = shape[1];
  const npy_array array = w.create("features.npy", dtype::float32, {n, width});
  const auto features = array.as<float>();
  auto in = member.reader();
  progress bar("node features", n, " rows", quiet);
  const std::int64_t rows_per_chunk =
      std::max<std::int64_t>(1, (1 << 22) / std::max<std::int64_t>(width, 1));
  for (std::int64_t row = 0; row < n; row += rows_per_chunk) {
    const auto rows = std::min(rows_per_chunk, n - row);
    const auto out = features.subspan(static_cast<std::size_t>(row * width),
                                      static_cast<std::size_t>(rows * width));
    in.read_floats(member.header().descr, out);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!std::isfinite(out[i]))
        throw data_error(member.where(), fmt::format("row {}, column {}: {} is not finite",
                                                     row + static_cast<std::int64_t>(i) / width,
                                                     static_cast<std::int64_t>(i) % width, out[i]));
    bar.update(row + rows);
    throw_if_interrupted();
  }
  bar.finish();
  return width;
}

// raw/node-label.npz's node_label (n or n × 1): a class per node, NaN for
// none (-1). Returns num_classes (largest label + 1).
int import_npz_labels(const fs::path& archive, std::int64_t n, std::int64_t meta_classes,
                      native_writer& w) {
  const npz_member member(archive, "node_label");
  const auto& shape = member.header().shape;
  if (shape.empty() || shape[0] != n || member.elements() != n)
    throw data_error(member.where(), fmt::format("has shape ({}), expected ({},) or ({}, 1)",
                                                 fmt::join(shape, ", "), n, n));
  const npy_array array = w.create("labels.npy", dtype::int32, {n});
  const auto labels = array.as<std::int32_t>();
  auto in = member.reader();
  std::vector<float> chunk;
  std::int32_t largest = -1;
  for (std::int64_t first = 0; first < n; first += 1 << 20) {
    chunk.resize(static_cast<std::size_t>(std::min<std::int64_t>(1 << 20, n - first)));
    in.read_floats(member.header().descr, chunk);
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      const float x = chunk[i];
      const auto node = first + static_cast<std::int64_t>(i);
      std::int32_t label = -1;
      if (!std::isnan(x)) {
        if (x < 0 || x != std::floor(x) || x >= static_cast<float>(1 << 24))
          throw data_error(member.where(),
                           fmt::format("node {}: {} is not a class label", node, x));
        label = static_cast<std::int32_t>(x);
      }
      if (meta_classes > 0 && label >= meta_classes)
        throw data_error(member.where(),
                         fmt::format("node {}: label {} is not below num_classes = {} of "
                                     "meta.json",
                                     node, label, meta_classes));
      labels[node] = label;
      largest = std::max(largest, label);
    }
    throw_if_interrupted();
  }
  return largest + 1;
}

// Where each node of one split was seen: the part (1-based index into
// split_parts) and the line, so that a node listed twice in one part or in two
// parts (trained twice, or evaluated on what it was trained on) is refused.
struct split_seen {
  std::vector<std::uint8_t> part;
  std::vector<std::int64_t> line;
};

constexpr std::array<const char*, 3> split_parts{"train", "valid", "test"};

std::vector<vertex_t> read_ids(const fs::path& path, std::int64_t n, std::uint8_t part,
                               split_seen& seen) {
  gz_lines in(path);
  std::vector<vertex_t> ids;
  std::string_view line;
  while (in.next(line)) {
    if (line.find(',') != std::string_view::npos) in.fail("expected one node id per line");
    const vertex_t v = parse_node(line, in, n);
    const auto at = static_cast<std::size_t>(v);
    if (seen.part[at] == part)
      in.fail(fmt::format("node {} is listed twice (first on line {})", v, seen.line[at]));
    if (seen.part[at] != 0)
      in.fail(fmt::format("node {} is also in {}.csv.gz (line {})", v,
                          split_parts[seen.part[at] - 1], seen.line[at]));
    seen.part[at] = part;
    seen.line[at] = in.line_number();
    ids.push_back(v);
    if (ids.size() % progress_every == 0) throw_if_interrupted();
  }
  return ids;
}

// Whether split/NAME is a link-prediction split (ogbl-*: train.pt and the
// rest as torch files, or split_dict.pt), which bulkgnn.ogb_link_split reads
// from Python: no node split, and no reason to refuse the graph.
bool is_link_split(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir / "train.csv.gz", ec) &&
         (fs::exists(dir / "train.pt", ec) || fs::exists(dir / "split_dict.pt", ec));
}

// Imports every split/NAME directory of node ids; returns the names, sorted.
std::vector<std::string> import_splits(const ogb_layout& ogb, std::int64_t n, native_writer& w) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(ogb.splits(), ec))) return names;
  if (!fs::is_directory(ogb.splits(), ec))
    throw data_error(ogb.splits().string(), "is not a directory (of split/NAME directories)");
  // Every entry is a split: one that is not a directory is refused by name
  // rather than skipped, so that a split never goes missing silently.
  for (const auto& entry : fs::directory_iterator(ogb.splits())) {
    if (!entry.is_directory(ec))
      throw data_error(entry.path().string(),
                       "is not a directory: split/NAME holds a split's train, valid and test "
                       "files");
    if (is_link_split(entry.path())) continue;
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    const auto nodes = static_cast<std::size_t>(n);
    split_seen seen{std::vector<std::uint8_t>(nodes, 0), std::vector<std::int64_t>(nodes, 0)};
    for (std::uint8_t p = 0; p < split_parts.size(); ++p) {
      const char* part = split_parts[p];
      const fs::path path = ogb.splits() / name / fmt::format("{}.csv.gz", part);
      if (!fs::exists(path))
        throw data_error(path.string(),
                         fmt::format("missing: split '{}' needs train, valid and test", name));
      const auto ids = read_ids(path, n, static_cast<std::uint8_t>(p + 1), seen);
      const npy_array array = w.create(fmt::format("split/{}/{}.npy", name, part), dtype::int32,
                                       {static_cast<std::int64_t>(ids.size())});
      std::ranges::copy(ids, array.as<vertex_t>().begin());
    }
  }
  return names;
}

}  // namespace

void import_ogb(const fs::path& ogb_dir, const fs::path& out_dir,
                const ogb_import_options& options) {
  const interrupt_scope polled;  // a signal unwinds the import and its staging
  const ogb_layout ogb{ogb_dir};
  BULKGNN_EXPECTS(!options.edge_weight_column || *options.edge_weight_column >= 0,
                  "ogb_import_options.edge_weight_column must be >= 0, got {}",
                  options.edge_weight_column.value_or(0));
  detail::require_directory(ogb_dir);
  if (!is_ogb_raw_dir(ogb_dir))
    throw data_error(ogb.raw("edge.csv.gz").string(),
                     "missing (and no raw/data.npz): not an OGB raw directory");
  const nlohmann::json meta = read_meta(ogb.meta());
  const bool inverse = options.add_inverse_edges.value_or(meta_add_inverse(meta, ogb.meta()));
  const std::int64_t meta_classes =
      meta.contains("num_classes") && meta["num_classes"].is_number_integer()
          ? meta["num_classes"].get<std::int64_t>()
          : 0;
  // OGB ships its largest graphs (ogbn-papers100M) as raw/data.npz and
  // raw/node-label.npz instead of CSV files.
  const fs::path archive = ogb.raw("data.npz");
  std::error_code ec;
  const bool binary = !fs::exists(fs::symlink_status(ogb.raw("edge.csv.gz"), ec));
  const std::int64_t n =
      binary ? npz_node_count(archive) : read_node_count(ogb.raw("num-node-list.csv.gz"));
  check_meta_node_count(meta, ogb.meta(), n);

  native_writer w(out_dir);
  const edge_summary edges =
      binary ? import_edges(npz_edge_source(archive, n, options.edge_weight_column, options.quiet),
                            n, inverse, w)
             : import_edges(csv_edge_source(ogb, n, options.edge_weight_column, options.quiet), n,
                            inverse, w);
  std::int64_t f = 0;
  int classes = 0;
  if (binary) {
    if (npz_member::exists(archive, "node_feat"))
      f = import_npz_features(archive, n, options.quiet, w);
    const fs::path labels = ogb.raw("node-label.npz");
    if (fs::exists(labels)) classes = import_npz_labels(labels, n, meta_classes, w);
  } else {
    const fs::path feat = ogb.raw("node-feat.csv.gz");
    if (fs::exists(feat)) f = import_features(feat, n, options.quiet, w);
    const fs::path label = ogb.raw("node-label.csv.gz");
    if (fs::exists(label)) classes = import_labels(label, n, meta_classes, w);
  }
  const auto splits = import_splits(ogb, n, w);
  // A stop asked for during the last phase still unwinds: nothing is published.
  throw_if_interrupted();

  fs::path source = fs::absolute(ogb_dir).lexically_normal();
  if (!source.has_filename()) source = source.parent_path();
  const std::string name = meta.contains("name") && meta["name"].is_string()
                               ? meta["name"].get<std::string>()
                               : source.filename().string();
  w.commit({{"name", name},
            {"num_nodes", n},
            {"num_edges", edges.stored},
            {"num_features", f},
            {"num_classes", classes},
            {"splits", splits},
            {"source", source.string()},
            {"source_format", binary ? "ogb-node-raw-npz" : "ogb-node-raw"},
            {"edge_weight_column", options.edge_weight_column
                                       ? nlohmann::json(*options.edge_weight_column)
                                       : nlohmann::json(nullptr)},
            {"add_inverse_edge", inverse},
            {"add_inverse_edge_from", options.add_inverse_edges           ? "option"
                                      : meta.contains("add_inverse_edge") ? "meta.json"
                                                                          : "default"},
            {"num_input_edges", edges.lines},
            {"ogb_meta", meta}});
}

}  // namespace bulkgnn::data
