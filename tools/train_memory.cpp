#include "train_memory.hpp"

#include "bulkgnn/trainer/layer_table.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace bulkgnn::tools {

namespace {

constexpr double float_bytes = sizeof(float);
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// Input and output width of each layer, input first.
std::vector<std::pair<double, double>> layer_widths(const trainer::training_data& ds,
                                                    const trainer::train_options& o) {
  std::vector<std::pair<double, double>> widths;
  const auto layers = o.model.layers;
  for (int l = 0; l < layers; ++l)
    widths.emplace_back(static_cast<double>(l == 0 ? ds.feature_dim : o.model.hidden),
                        static_cast<double>(l + 1 == layers ? ds.num_classes : o.model.hidden));
  return widths;
}

// Vertices per layer of one minibatch, seeds first: each hop adds at most
// `fanout` neighbours per vertex (node-wise) or `fanout` vertices
// (layer-wise), and never more than the graph holds. A sampler whose layers
// are not its hops (shadow) runs every layer but the seeds' on all it
// reached.
std::vector<double> frontier_sizes(const trainer::training_data& ds,
                                   const trainer::train_options& o) {
  const auto n = static_cast<double>(ds.num_nodes);
  const bool per_destination =
      sampler::find_sampler(o.sampling.kind).fanout == sampler::fanout_unit::per_destination;
  std::vector<double> sizes{std::min(n, static_cast<double>(o.loading.batch_size))};
  for (const auto fanout : o.sampling.fanouts) {
    const double f = fanout < 0 ? n : static_cast<double>(fanout);
    const double next = per_destination ? sizes.back() * (f + 1) : sizes.back() + f;
    sizes.push_back(std::min(n, next));
  }
  if (sampler::find_sampler(o.sampling.kind).any_depth) {
    const double seeds = sizes.front();
    sizes.assign(static_cast<std::size_t>(sampler::block_count(o.sampling)) + 1, sizes.back());
    sizes.front() = seeds;
  }
  return sizes;
}

// A layer from `in` to `out` columns over `rows` output vertices holds the
// aggregated input and its gradient, and the output, its gradient and the
// dropout mask.
double layer_bytes(double rows, double in, double out) {
  return float_bytes * rows * (2 * in + 3 * out);
}

constexpr double unlimited = std::numeric_limits<double>::infinity();

// The number after `key` in a file of "key value" lines such as /proc/meminfo
// ("MemAvailable: 123 kB"), times `unit`; unlimited if absent.
double keyed_number_in(const std::string& path, const std::string& key, double unit) {
  std::ifstream in(path);
  std::string name;
  while (in >> name) {
    double value = 0;
    if (name == key) return in >> value ? value * unit : unlimited;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return unlimited;
}

// A cgroup's memory limit file: a number of bytes, or "max" (cgroup v2) for
// none; unlimited if absent.
double cgroup_limit_in(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (!(in >> token) || token == "max") return unlimited;
  double bytes = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), bytes);
  return ec == std::errc() && end == token.data() + token.size() ? bytes : unlimited;
}

}  // namespace

train_memory estimate_train_memory(const trainer::training_data& ds,
                                   const trainer::train_options& o) {
  const bool root_weight = trainer::find_layer(trainer::layer_for(o)).has_root_weight();
  const auto widths = layer_widths(ds, o);
  const auto frontier = frontier_sizes(ds, o);
  const auto n = static_cast<double>(ds.num_nodes);
  train_memory m;
  for (std::size_t l = 0; l < widths.size(); ++l) {
    const auto [in, out] = widths[l];
    m.model += 4 * float_bytes * ((root_weight ? 2 : 1) * in * out + out);
    // Layer l computes hop L-l-1 from hop L-l.
    m.minibatch += layer_bytes(frontier[widths.size() - l - 1], in, out);
    if (o.eval == trainer::evaluation::full && o.eval_every > 0)
      m.evaluation = std::max(m.evaluation, layer_bytes(n, in, out));
  }
  return m;
}

double available_memory_bytes() {
  const double meminfo = keyed_number_in("/proc/meminfo", "MemAvailable:", 1024);
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  const double cgroup_v2 = cgroup_limit_in("/sys/fs/cgroup/memory.max");
  const double cgroup_v1 = cgroup_limit_in("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  return std::min({std::isfinite(meminfo) ? meminfo : physical, cgroup_v2, cgroup_v1});
}

void require_memory_for(const trainer::training_data& ds, const trainer::train_options& o) {
  const auto m = estimate_train_memory(ds, o);
  const double available = available_memory_bytes();
  if (m.total() <= available) return;
  std::string culprit = fmt::format(
      "lower --hidden (model state {:.1f} GiB: weights, gradients, "
      "Adam moments for {} input features)",
      m.model / gib, ds.feature_dim);
  if (m.minibatch > m.model && m.minibatch >= m.evaluation)
    culprit = fmt::format("lower --batch-size, --fanouts or --hidden (one minibatch {:.1f} GiB)",
                          m.minibatch / gib);
  else if (m.evaluation > m.model)
    culprit = fmt::format(
        "use --eval sampled or lower --hidden (full-graph evaluation over {} "
        "vertices {:.1f} GiB)",
        ds.num_nodes, m.evaluation / gib);
  throw option_error(fmt::format(
      "--hidden {} with --batch-size {} and --fanouts {}: the run needs at least {:.1f} GiB, "
      "more than the {:.1f} GiB of memory available; {}",
      o.model.hidden, o.loading.batch_size, fmt::join(o.sampling.fanouts, ","), m.total() / gib,
      available / gib, culprit));
}

}  // namespace bulkgnn::tools
