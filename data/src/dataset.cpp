#include "bulkgnn/data/dataset.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/input_file.hpp"
#include "bulkgnn/core/staging.hpp"
#include "bulkgnn/data/ogb_import.hpp"
#include "native_format.hpp"

#include <oneapi/tbb/parallel_for.h>

namespace bulkgnn::data {

namespace fs = std::filesystem;

namespace detail {

nlohmann::json read_manifest(const fs::path& path, const char* format) {
  if (const auto reason = not_a_regular_file(path); !reason.empty())
    throw data_error(path.string(), reason);
  std::ifstream in(path);
  if (!in) throw data_error(path.string(), fmt::format("missing (not a {} directory?)", format));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw data_error(path.string(), fmt::format("invalid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw data_error(path.string(), "is not a JSON object");
  if (j.value("format", "") != format)
    throw data_error(path.string(), fmt::format("\"format\" is not \"{}\"", format));
  // Compared as JSON: a version too large for an int parses as a float, and
  // converting that to int would be undefined.
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != 1)
    throw data_error(path.string(), "unsupported version (expected 1)");
  return j;
}

void check_shape(const npy_array& a, const std::vector<std::int64_t>& expected) {
  if (a.shape() != expected)
    throw data_error(a.path().string(),
                     fmt::format("has shape ({}), manifest.json implies ({})",
                                 fmt::join(a.shape(), ", "), fmt::join(expected, ", ")));
}

std::int64_t manifest_count(const nlohmann::json& m, const char* key, const fs::path& path,
                            bool required) {
  if (!m.contains(key)) {
    if (required) throw data_error(path.string(), fmt::format("lacks \"{}\"", key));
    return 0;
  }
  const auto& v = m[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    throw data_error(path.string(), fmt::format("\"{}\" is not a non-negative integer", key));
  return v.get<std::int64_t>();
}

void require_directory(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (status.type() == fs::file_type::not_found)
    throw data_error(dir.string(), "no such directory");
  if (status.type() != fs::file_type::directory)
    throw data_error(dir.string(), ec ? fmt::format("cannot be resolved: {}", ec.message())
                                      : "is not a directory");
}

void check_finite(std::span<const float> values, const fs::path& path) {
  const auto bad =
      first_where(std::ssize(values), [&](std::int64_t i) { return !std::isfinite(values[i]); });
  if (bad != std::ssize(values))
    throw data_error(path.string(),
                     fmt::format("non-finite value {} at flat index {}", values[bad], bad));
}

void check_inside_dataset(const std::string& relative, const fs::path& manifest_path,
                          const char* field) {
  const fs::path p(relative);
  const bool escapes = p.empty() || p.has_root_path() ||
                       std::any_of(p.begin(), p.end(), [](const fs::path& c) { return c == ".."; });
  if (escapes)
    throw data_error(manifest_path.string(),
                     fmt::format("{} entry '{}' leaves the dataset directory", field, relative));
}

void check_row_pointer(std::span<const edge_t> indptr, edge_t entries, const fs::path& path) {
  if (indptr.front() != 0 || indptr.back() != entries)
    throw data_error(path.string(), fmt::format("starts at {} and ends at {}, expected 0 and {}",
                                                indptr.front(), indptr.back(), entries));
  const auto rows = std::ssize(indptr) - 1;
  const auto decrease =
      first_where(rows, [&](std::int64_t v) { return indptr[v + 1] < indptr[v]; });
  if (decrease != rows)
    throw data_error(path.string(),
                     fmt::format("decreases at row {} ({} > {}): not a valid CSR row pointer",
                                 decrease, indptr[decrease], indptr[decrease + 1]));
}

void check_column_ids(std::span<const vertex_t> indices, std::int64_t columns,
                      const fs::path& path) {
  const auto bad_column = first_where(
      std::ssize(indices), [&](std::int64_t e) { return indices[e] < 0 || indices[e] >= columns; });
  if (bad_column != std::ssize(indices))
    throw data_error(path.string(), fmt::format("node id {} at entry {} is outside [0, {})",
                                                indices[bad_column], bad_column, columns));
}

void check_sorted_rows(std::span<const edge_t> indptr, std::span<const vertex_t> indices,
                       const fs::path& path) {
  const auto rows = std::ssize(indptr) - 1;
  const auto unsorted = first_where(rows, [&](std::int64_t v) {
    for (auto e = indptr[v] + 1; e < indptr[v + 1]; ++e)
      if (indices[e] < indices[e - 1]) return true;
    return false;
  });
  if (unsorted == rows) return;
  const auto* row = indices.data() + indptr[unsorted];
  const auto* end = indices.data() + indptr[unsorted + 1];
  const auto* at = std::is_sorted_until(row, end);
  throw data_error(path.string(),
                   fmt::format("row {} is not sorted: column {} follows {} (entry {}); the native "
                               "format keeps each row's column ids in ascending order",
                               unsorted, *at, *(at - 1), at - indices.data()));
}

void check_edge_weights(std::span<const edge_t> indptr, std::span<const float> weights,
                        const fs::path& path) {
  const auto bad = first_where(std::ssize(weights), [&](std::int64_t e) {
    return !(weights[e] > 0.0f && std::isfinite(weights[e]));
  });
  if (bad == std::ssize(weights)) return;
  const auto row =
      std::upper_bound(indptr.begin(), indptr.end(), static_cast<edge_t>(bad)) - indptr.begin() - 1;
  throw data_error(path.string(),
                   fmt::format("weight {} of entry {} (row {}) is not positive and finite; "
                               "weighted sampling draws neighbours in proportion to positive "
                               "weights",
                               weights[bad], bad, row));
}

void check_labels(std::span<const std::int32_t> labels, int num_classes, const fs::path& path) {
  const auto bad_label = first_where(std::ssize(labels), [&](std::int64_t v) {
    return labels[v] < -1 || labels[v] >= num_classes;
  });
  if (bad_label != std::ssize(labels))
    throw data_error(path.string(), fmt::format("label {} of node {} is outside [-1, {})",
                                                labels[bad_label], bad_label, num_classes));
}

void sort_rows(std::span<const edge_t> indptr, std::span<vertex_t> indices,
               std::span<float> weights, std::span<std::int64_t> edge_numbers) {
  struct entry {
    vertex_t column;
    float weight;
    std::int64_t number;
  };
  const auto rows = std::ssize(indptr) - 1;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, 4096), [&](const auto& range) {
    std::vector<entry> row;
    for (auto v = range.begin(); v != range.end(); ++v) {
      const auto first = indices.begin() + indptr[v], last = indices.begin() + indptr[v + 1];
      if (weights.empty() && edge_numbers.empty()) {
        std::sort(first, last);
        continue;
      }
      row.clear();
      for (auto e = indptr[v]; e < indptr[v + 1]; ++e)
        row.push_back({indices[e], weights.empty() ? 0.0f : weights[e],
                       edge_numbers.empty() ? 0 : edge_numbers[e]});
      std::stable_sort(row.begin(), row.end(),
                       [](const entry& a, const entry& b) { return a.column < b.column; });
      for (std::size_t k = 0; k < row.size(); ++k) {
        const auto at = indptr[v] + static_cast<edge_t>(k);
        indices[at] = row[k].column;
        if (!weights.empty()) weights[at] = row[k].weight;
        if (!edge_numbers.empty()) edge_numbers[at] = row[k].number;
      }
    }
  });
}

}  // namespace detail

namespace {

using detail::manifest_name;
constexpr const char* native_format_name = "bulkgnn-native";
constexpr const char* import_staging_prefix = "bulkgnn-import-";

// Creates a fresh uniquely named directory "<prefix>XXXXXX" (mkdtemp), so that
// concurrent writers never share one.
fs::path make_unique_dir(const fs::path& prefix) {
  std::string pattern = prefix.string() + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw data_error(pattern, fmt::format("cannot create directory: {}", std::strerror(errno)));
  return pattern;
}

void fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw data_error(path.string(), fmt::format("open failed: {}", std::strerror(errno)));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    throw data_error(path.string(), fmt::format("fsync failed: {}", std::strerror(errno)));
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec)
    throw data_error(to.string(),
                     fmt::format("cannot rename {} here: {}", from.string(), ec.message()));
}

// The "format" of dir's manifest.json, or "" where there is none to read.
std::string manifest_format(const fs::path& dir) {
  std::ifstream in(dir / manifest_name);
  if (!in) return {};
  try {
    const auto j = nlohmann::json::parse(in);
    return j.is_object() && j.contains("format") && j["format"].is_string()
               ? j["format"].get<std::string>()
               : std::string();
  } catch (const nlohmann::json::parse_error&) {
    return {};
  }
}

// Moves the finished directory `tmp` to `final_dir`, replacing a previous
// one of the same `format` there but never another kind of directory (a
// link split never replaces the dataset it was made from).
void move_into_place(const fs::path& tmp, const fs::path& final_dir, const std::string& format) {
  if (!fs::exists(final_dir)) return rename_or_throw(tmp, final_dir);
  if (!fs::is_directory(final_dir) ||
      (!fs::is_empty(final_dir) && manifest_format(final_dir) != format))
    throw data_error(
        final_dir.string(),
        fmt::format("exists and is not a {} directory; refusing to replace it", format));
  std::error_code ec;
  // An atomic swap: readers see the old or the new dataset, never neither.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);
    return;
  }
  // Filesystems without RENAME_EXCHANGE: a short window with no dataset.
  const fs::path old = tmp.string() + ".old";
  rename_or_throw(final_dir, old);
  rename_or_throw(tmp, final_dir);
  fs::remove_all(old, ec);
}

}  // namespace

bool is_ogb_raw_dir(const fs::path& dir) {
  // Present in any form: the import then names a directory, a named pipe or
  // a symlink loop where the file should be, instead of the directory being
  // taken for a native one without its manifest.
  std::error_code ec;
  return fs::exists(fs::symlink_status(dir / "raw" / "edge.csv.gz", ec)) ||
         fs::exists(fs::symlink_status(dir / "raw" / "data.npz", ec));
}

dataset dataset::open(const fs::path& dir, const ogb_import_options& ogb) {
  detail::require_directory(dir);
  if (!fs::exists(dir / manifest_name) && !is_ogb_raw_dir(dir))
    throw data_error(dir.string(),
                     fmt::format("is neither a bulkgnn native dataset (no {}) nor an OGB raw "
                                 "directory (no raw/edge.csv.gz or raw/data.npz)",
                                 manifest_name));
  if (fs::exists(dir / manifest_name)) {
    BULKGNN_EXPECTS(!ogb.add_inverse_edges,
                    "ogb_import_options.add_inverse_edges: {} is a native dataset, whose edges are "
                    "as it was converted; it applies to OGB raw directories",
                    dir.string());
    return open_native(dir);
  }
  // Opened before the staging directory exists and closed after it is gone,
  // so a signal in between unwinds instead of leaving it behind.
  const interrupt_scope polled;
  const fs::path staging_parent = fs::temp_directory_path();
  sweep_stale_staging(staging_parent, import_staging_prefix);
  const fs::path tmp =
      make_unique_dir(staging_parent / (staging_name(import_staging_prefix) + "-"));
  struct remove_on_exit {
    fs::path dir;
    ~remove_on_exit() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{tmp};
  // The mappings outlive the unlinked files, so the import costs no disk
  // space once this returns.
  import_ogb(dir, tmp / "native", ogb);
  return open_native(tmp / "native");
}

dataset dataset::open_native(const fs::path& dir) {
  // A manifest field of the wrong JSON type surfaces deep in the reading
  // below; report it against the manifest rather than as a bare json error.
  try {
    dataset d = read_native(dir);
    d.validate();
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw data_error((dir / manifest_name).string(), std::string("malformed field: ") + e.what());
  }
}

dataset dataset::read_native(const fs::path& dir) {
  using namespace detail;
  const fs::path manifest_path = dir / manifest_name;
  dataset d;
  d.dir_ = dir;
  d.manifest_ = read_manifest(manifest_path, native_format_name);
  const auto& m = d.manifest_;
  const std::int64_t n = manifest_count(m, "num_nodes", manifest_path, true);
  const std::int64_t edges = manifest_count(m, "num_edges", manifest_path, true);
  const std::int64_t f = manifest_count(m, "num_features", manifest_path, false);
  if (n > std::numeric_limits<vertex_t>::max())
    throw data_error(manifest_path.string(),
                     fmt::format("num_nodes {} exceeds the 32-bit vertex id range", n));
  const std::int64_t classes = manifest_count(m, "num_classes", manifest_path, false);
  if (classes > std::numeric_limits<std::int32_t>::max())
    throw data_error(manifest_path.string(), fmt::format("num_classes {} is too large", classes));
  d.num_classes_ = static_cast<int>(classes);
  d.name_ = m.value("name", dir.filename().string());

  if (m.contains("arrays"))
    for (const auto& rel : m["arrays"])
      check_inside_dataset(rel.get<std::string>(), manifest_path, "\"arrays\"");

  const auto listed = [&](const std::string& rel) {
    if (!m.contains("arrays")) return fs::exists(dir / rel);
    const auto& arrays = m["arrays"];
    return std::find(arrays.begin(), arrays.end(), rel) != arrays.end();
  };
  const auto load = [&](const std::string& rel, bool prefault = false) -> const npy_array& {
    const fs::path path = dir / rel;
    if (!fs::exists(path)) throw data_error(path.string(), "missing (listed in manifest.json)");
    return d.arrays_.emplace_back(npy_array::open(path, prefault));
  };

  // Samplers read the topology at random: map it whole up front.
  const auto indptr = typed<edge_t>(load("indptr.npy", true), {n + 1});
  const auto indices = typed<vertex_t>(load("indices.npy", true), {edges});
  // A cheap consistency check only; validate() scans everything.
  if (indptr.front() != 0 || indptr.back() != edges)
    throw data_error((dir / "indptr.npy").string(),
                     fmt::format("starts at {} and ends at {}, expected 0 and num_edges = {}",
                                 indptr.front(), indptr.back(), edges));
  std::span<const float> weights;
  if (listed("edge_weight.npy")) weights = typed<float>(load("edge_weight.npy"), {edges});
  d.graph_ = csr_view{n, n, indptr, indices, weights};

  if (listed("features.npy")) {
    d.features_ = {n, f, typed<float>(load("features.npy"), {n, f})};
  } else if (f != 0) {
    throw data_error((dir / "features.npy").string(), "missing but num_features is not 0");
  }
  if (listed("labels.npy")) d.labels_ = typed<std::int32_t>(load("labels.npy"), {n});
  d.splits_ = read_splits(m, manifest_path,
                          [&](const std::string& rel) -> const npy_array& { return load(rel); });
  return d;
}

const split& dataset::find_split(const std::string& name) const {
  return detail::find_split(splits_, name, name_);
}

std::vector<vertex_t> dataset::training_vertices(const std::string& split_name) const {
  return detail::training_vertices(splits_, num_nodes(), split_name, name_);
}

fs::path dataset::where(const std::string& file) const {
  if (!dir_.empty()) return dir_ / file;
  return fs::path(file).replace_extension().string() + " (in memory)";
}

void dataset::validate() const {
  detail::check_row_pointer(graph_.indptr, graph_.nnz(), where("indptr.npy"));
  detail::check_column_ids(graph_.indices, num_nodes(), where("indices.npy"));
  detail::check_sorted_rows(graph_.indptr, graph_.indices, where("indices.npy"));
  detail::check_edge_weights(graph_.indptr, graph_.values, where("edge_weight.npy"));
  detail::check_labels(labels_, num_classes_, where("labels.npy"));
  detail::check_finite(features_.data, where("features.npy"));
  for (const auto& s : splits_)
    detail::validate_split(s, num_nodes(), dir_.empty() ? fs::path("(in memory)") : dir_);
}

namespace detail {

const split& find_split(const std::vector<split>& splits, const std::string& name,
                        const std::string& dataset_name) {
  if (splits.empty()) throw option_error(fmt::format("dataset '{}' has no splits", dataset_name));
  if (name.empty()) return splits.front();
  const auto it =
      std::find_if(splits.begin(), splits.end(), [&](const split& s) { return s.name == name; });
  if (it != splits.end()) return *it;
  std::vector<std::string> names;
  for (const auto& s : splits) names.push_back(s.name);
  throw option_error(fmt::format("dataset '{}' has no split '{}' (available: {})", dataset_name,
                                 name, fmt::join(names, ", ")));
}

std::vector<vertex_t> training_vertices(const std::vector<split>& splits, std::int64_t num_nodes,
                                        const std::string& split_name,
                                        const std::string& dataset_name) {
  if (splits.empty()) {
    BULKGNN_EXPECTS(split_name.empty(),
                    "training_vertices: split {} asked for, but the dataset has no splits",
                    split_name);
    std::vector<vertex_t> all(static_cast<std::size_t>(num_nodes));
    std::iota(all.begin(), all.end(), vertex_t{0});
    return all;
  }
  const auto train = find_split(splits, split_name, dataset_name).train;
  return {train.begin(), train.end()};
}

// A node in two parts of a split would be trained on and evaluated on, and a
// node listed twice in one part counts twice: both are refused.
void validate_split(const split& s, std::int64_t num_nodes, const fs::path& dir) {
  // part_of[v]: 1 + the index in `parts` of the part that lists v, or 0.
  constexpr std::uint8_t none = 0;
  std::vector<std::uint8_t> part_of(static_cast<std::size_t>(num_nodes), none);
  const std::array<std::pair<const char*, std::span<const vertex_t>>, 3> parts{
      {{"train", s.train}, {"valid", s.valid}, {"test", s.test}}};
  for (std::uint8_t p = 0; p < parts.size(); ++p) {
    const auto& [part, ids] = parts[p];
    const fs::path path = dir / "split" / s.name / fmt::format("{}.npy", part);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const vertex_t v = ids[i];
      if (v < 0 || v >= num_nodes)
        throw data_error(path.string(),
                         fmt::format("node id {} at entry {} is outside [0, {})", v, i, num_nodes));
      const std::uint8_t mark = part_of[static_cast<std::size_t>(v)];
      if (mark == p + 1)
        throw data_error(path.string(), fmt::format("node {} is listed twice (entry {})", v, i));
      if (mark != none)
        throw data_error(path.string(),
                         fmt::format("node {} (entry {}) is also in {}.npy of split '{}'", v, i,
                                     parts[mark - 1].first, s.name));
      part_of[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(p + 1);
    }
  }
}

}  // namespace detail

native_writer::native_writer(fs::path final_dir, std::string format)
    : final_dir_(std::move(final_dir)), format_(std::move(format)) {
  if (final_dir_.filename().empty()) final_dir_ = final_dir_.parent_path();
  const fs::path parent = fs::absolute(final_dir_).parent_path();
  std::error_code ec;
  for (fs::path p = parent; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    created_parents_.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(parent, ec);
  if (ec) throw data_error(parent.string(), "cannot create directory: " + ec.message());
  // A sibling on the same filesystem, so that commit() is a rename.
  const std::string staging_prefix = fmt::format(".{}.tmp-", final_dir_.filename().string());
  sweep_stale_staging(parent, staging_prefix);
  tmp_dir_ = make_unique_dir(parent / (staging_name(staging_prefix) + "-"));
  // mkdtemp makes it private; the committed dataset should be as readable as its files.
  fs::permissions(tmp_dir_,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
}

native_writer::~native_writer() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_dir_, ec);
  // Only empty ones: another writer may have put something there meanwhile.
  for (const auto& dir : created_parents_) fs::remove(dir, ec);
}

npy_array native_writer::create(const std::string& relative_path, dtype type,
                                std::vector<std::int64_t> shape) {
  BULKGNN_EXPECTS(!committed_, "native_writer::create: {} after commit", relative_path);
  const fs::path path = tmp_dir_ / relative_path;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw data_error(path.parent_path().string(), "cannot create directory: " + ec.message());
  npy_array a = npy_array::create(path, type, std::move(shape));
  if (std::find(array_paths_.begin(), array_paths_.end(), relative_path) == array_paths_.end())
    array_paths_.push_back(relative_path);
  return a;
}

void native_writer::commit(nlohmann::json manifest) {
  BULKGNN_EXPECTS(!committed_, "native_writer::commit called twice for {}", final_dir_.string());
  manifest["format"] = format_;
  manifest["version"] = 1;
  manifest["arrays"] = array_paths_;
  const fs::path manifest_path = tmp_dir_ / manifest_name;
  {
    std::ofstream out(manifest_path);
    out << manifest.dump(2) << '\n';
    if (!out.flush())
      throw data_error(manifest_path.string(),
                       fmt::format("write failed: {}", std::strerror(errno)));
  }
  // Durable before visible: a crash after the rename must not expose
  // arrays whose pages never reached the disk.
  for (const auto& rel : array_paths_) fsync_path(tmp_dir_ / rel, O_RDONLY);
  fsync_path(manifest_path, O_RDONLY);
  move_into_place(tmp_dir_, final_dir_, format_);
  committed_ = true;
  fsync_path(fs::absolute(final_dir_).parent_path(), O_RDONLY | O_DIRECTORY);
}

}  // namespace bulkgnn::data
