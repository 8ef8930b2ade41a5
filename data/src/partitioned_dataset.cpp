#include "bulkgnn/data/partitioned_dataset.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/data/fingerprint.hpp"
#include "native_format.hpp"

#include <fmt/format.h>

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace bulkgnn::data {

namespace fs = std::filesystem;

namespace {

constexpr const char* partition_format_name = "bulkgnn-partition";

std::string part_dir(int part) { return fmt::format("part-{}", part); }

// The vertices of each part, ascending: row r of part K is members[K][r].
std::vector<std::vector<vertex_t>> members_of_parts(std::span<const std::int32_t> owner,
                                                    int parts) {
  std::vector<std::vector<vertex_t>> members(static_cast<std::size_t>(parts));
  for (std::size_t v = 0; v < owner.size(); ++v) {
    BULKGNN_EXPECTS(owner[v] >= 0 && owner[v] < parts,
                    "write_partitioned_dataset: vertex {} has owner {}, outside [0, {})", v,
                    owner[v], parts);
    members[owner[v]].push_back(static_cast<vertex_t>(v));
  }
  return members;
}

template <class T>
void copy_into(native_writer& out, const std::string& rel, std::span<const T> values,
               std::vector<std::int64_t> shape) {
  const npy_array a = out.create(rel, dtype_of<T>(), std::move(shape));
  std::copy(values.begin(), values.end(), a.as<T>().begin());
}

// Part K's rows of A and of the features.
void write_part(native_writer& out, const dataset& ds, int part,
                std::span<const vertex_t> members) {
  const auto graph = ds.graph();
  const auto rows = static_cast<std::int64_t>(members.size());
  const std::string dir = part_dir(part);
  const npy_array indptr_array = out.create(dir + "/indptr.npy", dtype::int64, {rows + 1});
  const auto indptr = indptr_array.as<edge_t>();
  indptr[0] = 0;
  for (std::int64_t r = 0; r < rows; ++r) indptr[r + 1] = indptr[r] + graph.degree(members[r]);
  const edge_t entries = indptr[rows];
  const npy_array indices = out.create(dir + "/indices.npy", dtype::int32, {entries});
  npy_array weights;
  if (graph.weighted()) weights = out.create(dir + "/edge_weight.npy", dtype::float32, {entries});
  const auto features = ds.features();
  npy_array feature_rows;
  if (!features.empty())
    feature_rows = out.create(dir + "/features.npy", dtype::float32, {rows, features.cols});
  tbb::parallel_for(std::int64_t{0}, rows, [&](std::int64_t r) {
    const vertex_t v = members[r];
    const auto columns = graph.row(v);
    std::copy(columns.begin(), columns.end(), indices.as<vertex_t>().begin() + indptr[r]);
    if (graph.weighted()) {
      const auto values = graph.row_values(v);
      std::copy(values.begin(), values.end(), weights.as<float>().begin() + indptr[r]);
    }
    if (!features.empty()) {
      const auto row = features.row(v);
      std::copy(row.begin(), row.end(), feature_rows.as<float>().begin() + r * features.cols);
    }
  });
}

}  // namespace

void write_partitioned_dataset(const dataset& ds, std::span<const std::int32_t> owner, int parts,
                               const partition_provenance& how, const fs::path& out) {
  BULKGNN_EXPECTS(parts >= 1, "write_partitioned_dataset: {} parts", parts);
  BULKGNN_EXPECTS(std::ssize(owner) == ds.num_nodes(),
                  "write_partitioned_dataset: {} owners for {} vertices", owner.size(),
                  ds.num_nodes());
  const auto members = members_of_parts(owner, parts);
  native_writer writer(out, partition_format_name);
  copy_into(writer, "owner.npy", owner, {ds.num_nodes()});
  {
    const npy_array in_degree = writer.create("in_degree.npy", dtype::int64, {ds.num_nodes()});
    const auto counts = in_degree.as<std::int64_t>();
    for (const vertex_t column : ds.graph().indices) ++counts[column];
  }
  if (!ds.labels().empty()) copy_into(writer, "labels.npy", ds.labels(), {ds.num_nodes()});
  std::vector<std::string> split_names;
  for (const auto& s : ds.splits()) {
    split_names.push_back(s.name);
    for (const auto& [part, ids] :
         {std::pair{"train", s.train}, {"valid", s.valid}, {"test", s.test}})
      copy_into(writer, fmt::format("split/{}/{}.npy", s.name, part), ids,
                {static_cast<std::int64_t>(ids.size())});
  }
  std::vector<std::int64_t> part_vertices;
  std::vector<edge_t> part_edges;
  for (int k = 0; k < parts; ++k) {
    write_part(writer, ds, k, members[k]);
    part_vertices.push_back(static_cast<std::int64_t>(members[k].size()));
    edge_t entries = 0;
    for (const vertex_t v : members[k]) entries += ds.graph().degree(v);
    part_edges.push_back(entries);
  }
  writer.commit(
      {{"name", ds.name()},
       {"parts", parts},
       {"num_nodes", ds.num_nodes()},
       {"num_edges", ds.num_edges()},
       {"num_features", ds.features().cols},
       {"num_classes", ds.num_classes()},
       {"weighted", ds.graph().weighted()},
       {"part_vertices", part_vertices},
       {"part_edges", part_edges},
       {"partition", {{"method", how.method}, {"seed", how.seed}, {"edge_cut", how.edge_cut}}},
       {"source", {{"name", ds.name()}, {"fingerprint", content_fingerprint(ds)}}},
       {"splits", split_names}});
}

bool is_partitioned_dataset(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / detail::manifest_name, ec)) return false;
  try {
    (void)detail::read_manifest(dir / detail::manifest_name, partition_format_name);
    return true;
  } catch (const data_error&) {
    return false;
  }
}

namespace {

int parts_in(const nlohmann::json& m, const fs::path& manifest_path) {
  const auto parts = detail::manifest_count(m, "parts", manifest_path, true);
  if (parts < 1 || parts > std::numeric_limits<std::int32_t>::max())
    throw data_error(manifest_path.string(),
                     fmt::format("\"parts\" is {}, not a part count", parts));
  return static_cast<int>(parts);
}

// "part_vertices" or "part_edges": a non-negative count per part, summing to
// `total`.
std::vector<std::int64_t> counts_of_parts(const nlohmann::json& m, const char* key, int parts,
                                          std::int64_t total, const fs::path& manifest_path) {
  if (!m.contains(key) || !m[key].is_array() || std::ssize(m[key]) != parts)
    throw data_error(manifest_path.string(),
                     fmt::format("\"{}\" is not a list of {} counts", key, parts));
  std::vector<std::int64_t> counts;
  std::int64_t sum = 0;
  for (const auto& c : m[key]) {
    if (!c.is_number_integer() || c.get<std::int64_t>() < 0 || c.get<std::int64_t>() > total)
      throw data_error(
          manifest_path.string(),
          fmt::format("\"{}\" holds {}, not a count in [0, {}]", key, c.dump(), total));
    counts.push_back(c.get<std::int64_t>());
    sum += counts.back();
  }
  if (sum != total)
    throw data_error(manifest_path.string(),
                     fmt::format("\"{}\" sums to {}, not {}", key, sum, total));
  return counts;
}

// owner.npy: n parts in [0, parts), `rows` of them `part` (the rows that
// `indptr` holds). Mapped for the check only, so that it leaves no pages
// resident.
void check_owners(const fs::path& path, std::int64_t n, int parts, int part, std::int64_t rows,
                  const fs::path& indptr) {
  const auto mapped = npy_array::open(path);
  const auto owners = detail::typed<std::int32_t>(mapped, {n});
  const auto bad_owner = detail::first_where(
      std::ssize(owners), [&](std::int64_t v) { return owners[v] < 0 || owners[v] >= parts; });
  if (bad_owner != std::ssize(owners))
    throw data_error(path.string(), fmt::format("vertex {} has owner {}, outside [0, {})",
                                                bad_owner, owners[bad_owner], parts));
  const auto owned = std::count(owners.begin(), owners.end(), part);
  if (owned != rows)
    throw data_error(path.string(), fmt::format("gives part {} {} vertices, but {} holds {} rows",
                                                part, owned, indptr.string(), rows));
}

// "partition": {"method": text, "seed": integer, "edge_cut": count}.
void check_provenance(const nlohmann::json& m, const fs::path& manifest_path) {
  const auto bad = [&] {
    return !m.contains("partition") || !m["partition"].is_object() ||
           !m["partition"].value("method", nlohmann::json()).is_string() ||
           !m["partition"].value("seed", nlohmann::json()).is_number_integer() ||
           !m["partition"].value("edge_cut", nlohmann::json()).is_number_integer() ||
           m["partition"]["edge_cut"].get<std::int64_t>() < 0;
  };
  if (bad())
    throw data_error(manifest_path.string(),
                     "\"partition\" is not {\"method\": text, \"seed\": integer, "
                     "\"edge_cut\": count}");
}

}  // namespace

int partitioned_dataset_parts(const fs::path& dir) {
  const fs::path manifest_path = dir / detail::manifest_name;
  return parts_in(detail::read_manifest(manifest_path, partition_format_name), manifest_path);
}

dataset_shard dataset_shard::open(const fs::path& dir, int part, bool with_features) {
  using namespace detail;
  const fs::path manifest_path = dir / manifest_name;
  dataset_shard s;
  try {
    s.manifest_ = read_manifest(manifest_path, partition_format_name);
    const auto& m = s.manifest_;
    s.parts_ = parts_in(m, manifest_path);
    BULKGNN_EXPECTS(part >= 0 && part < s.parts_, "{}: part {} asked for, but it has {} parts",
                    dir.string(), part, s.parts_);
    s.part_ = part;
    const auto n = manifest_count(m, "num_nodes", manifest_path, true);
    if (n > std::numeric_limits<vertex_t>::max())
      throw data_error(manifest_path.string(),
                       fmt::format("num_nodes {} exceeds the 32-bit vertex id range", n));
    s.num_edges_ = manifest_count(m, "num_edges", manifest_path, true);
    s.feature_dim_ = manifest_count(m, "num_features", manifest_path, false);
    const auto classes = manifest_count(m, "num_classes", manifest_path, false);
    if (classes > std::numeric_limits<std::int32_t>::max())
      throw data_error(manifest_path.string(), fmt::format("num_classes {} is too large", classes));
    s.num_classes_ = static_cast<int>(classes);
    s.name_ = m.value("name", dir.filename().string());
    const auto rows = counts_of_parts(m, "part_vertices", s.parts_, n, manifest_path)[part];
    const auto entries =
        counts_of_parts(m, "part_edges", s.parts_, s.num_edges_, manifest_path)[part];
    check_provenance(m, manifest_path);
    s.weighted_ = m.value("weighted", false);

    const auto load = [&](const std::string& rel) -> const npy_array& {
      const fs::path path = dir / rel;
      if (!fs::exists(path))
        throw data_error(path.string(), "missing (part of a partitioned dataset)");
      return s.arrays_.emplace_back(npy_array::open(path));
    };
    const std::string mine = part_dir(part);
    s.dir_ = dir;
    const auto indptr = typed<edge_t>(load(mine + "/indptr.npy"), {rows + 1});
    const auto indices = typed<vertex_t>(load(mine + "/indices.npy"), {entries});
    std::span<const float> weights;
    if (s.weighted_) weights = typed<float>(load(mine + "/edge_weight.npy"), {entries});
    s.rows_ = csr_view{rows, n, indptr, indices, weights};
    if (with_features && s.feature_dim_ > 0)
      s.features_ = {rows, s.feature_dim_,
                     typed<float>(load(mine + "/features.npy"), {rows, s.feature_dim_})};
    if (fs::exists(dir / "labels.npy")) s.labels_ = typed<std::int32_t>(load("labels.npy"), {n});
    s.splits_ = read_splits(m, manifest_path, load);

    check_row_pointer(indptr, entries, dir / mine / "indptr.npy");
    check_column_ids(indices, n, dir / mine / "indices.npy");
    check_sorted_rows(indptr, indices, dir / mine / "indices.npy");
    check_edge_weights(indptr, weights, dir / mine / "edge_weight.npy");
    check_finite(s.features_.data, dir / mine / "features.npy");
    check_labels(s.labels_, s.num_classes_, dir / "labels.npy");
    for (const auto& split : s.splits_) validate_split(split, n, dir);
    check_owners(dir / "owner.npy", n, s.parts_, part, rows, dir / mine / "indptr.npy");
  } catch (const nlohmann::json::exception& e) {
    throw data_error(manifest_path.string(), std::string("malformed field: ") + e.what());
  }
  digest_hasher hash;
  for (const char c : s.manifest_.dump()) hash.add(static_cast<unsigned char>(c));
  s.fingerprint_ = fmt::format("{:016x}", hash.value());
  return s;
}

std::vector<std::int32_t> dataset_shard::owners() const {
  const auto mapped = npy_array::open(dir_ / "owner.npy");
  const auto owner = detail::typed<std::int32_t>(mapped, {num_nodes()});
  return {owner.begin(), owner.end()};
}

std::vector<std::int64_t> dataset_shard::in_degrees() const {
  const auto mapped = npy_array::open(dir_ / "in_degree.npy");
  const auto degrees = detail::typed<std::int64_t>(mapped, {num_nodes()});
  const auto bad = detail::first_where(std::ssize(degrees), [&](std::int64_t v) {
    return degrees[v] < 0 || degrees[v] > num_edges_;
  });
  if (bad != std::ssize(degrees))
    throw data_error(
        mapped.path().string(),
        fmt::format("vertex {} has in-degree {}, outside [0, {}]", bad, degrees[bad], num_edges_));
  return {degrees.begin(), degrees.end()};
}

mapped_feature_rows dataset_shard::feature_rows_of(int part) const {
  BULKGNN_EXPECTS(part >= 0 && part < parts_, "{}: part {} asked for, but it has {} parts",
                  dir_.string(), part, parts_);
  BULKGNN_EXPECTS(feature_dim_ > 0, "{}: has no features", dir_.string());
  if (part == part_ && !features_.empty()) return {{}, features_};
  const fs::path manifest_path = dir_ / detail::manifest_name;
  const auto rows =
      counts_of_parts(manifest_, "part_vertices", parts_, num_nodes(), manifest_path)[part];
  const fs::path path = dir_ / part_dir(part) / "features.npy";
  if (!fs::exists(path)) throw data_error(path.string(), "missing (part of a partitioned dataset)");
  mapped_feature_rows mapped{npy_array::open(path), {}};
  mapped.rows = {rows, feature_dim_, detail::typed<float>(mapped.array, {rows, feature_dim_})};
  detail::check_finite(mapped.rows.data, path);
  return mapped;
}

const split& dataset_shard::find_split(const std::string& name) const {
  return detail::find_split(splits_, name, name_);
}

std::vector<vertex_t> dataset_shard::training_vertices(const std::string& split_name) const {
  return detail::training_vertices(splits_, num_nodes(), split_name, name_);
}

}  // namespace bulkgnn::data
