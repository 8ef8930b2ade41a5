#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/data/default_dataset.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace bulkgnn::tools {

data::dataset open_dataset_or_default(const std::string& path, bool quiet) {
  // dataset::open imports an OGB raw directory with a progress display of
  // its own.
  if (quiet) silence_progress();
  if (!path.empty()) return data::dataset::open(path);
  if (!quiet)
    fmt::print(stderr, "no DATA given: generating the embedded default (CSBM, 100000 vertices)\n");
  return data::open_default_dataset(quiet);
}

session::run_data open_run_data(const std::string& path, const session::layout_options& layout,
                                bool features, bool quiet) {
  session::run_data data;
  if (!path.empty() && data::is_partitioned_dataset(path))
    data.part = session::open_shard(path, layout, features);
  else
    data.whole = open_dataset_or_default(path, quiet);
  return data;
}

void start_session(std::optional<session::run_session>& session, const session::run_data& data,
                   const session::layout_options& layout, bool partition_features,
                   const std::vector<session::setting>& shared) {
  if (data.part)
    session.emplace(*data.part, layout, partition_features, shared);
  else
    session.emplace(*data.whole, layout, partition_features, shared);
}

nlohmann::json final_accuracy_json(const std::optional<std::int64_t>& best_epoch, double valid_acc,
                                   double test_acc) {
  if (!best_epoch) return {{"best_epoch", nullptr}, {"valid_acc", nullptr}, {"test_acc", nullptr}};
  return {{"best_epoch", *best_epoch + 1}, {"valid_acc", valid_acc}, {"test_acc", test_acc}};
}

void print_pipeline_stages(const loader::epoch_report& pipeline) {
  fmt::print("\n  stages busy/wait s:");
  for (const auto& s : pipeline.stages)
    fmt::print(" {} {:.2f}/{:.2f}", s.name, s.busy_seconds,
               s.input_wait_seconds + s.output_wait_seconds);
  if (!pipeline.stages.empty())
    fmt::print("  overlap {:.2f}x slowest ({})", pipeline.overlap_ratio(),
               pipeline.slowest_stage().name);
}

std::string accuracy_text(const std::optional<double>& accuracy) {
  return accuracy ? fmt::format("{:.4f}", *accuracy) : std::string("  -   ");
}

std::string model_inputs_text(std::int64_t feature_dim, std::int64_t node_embedding) {
  if (node_embedding > 0)
    return fmt::format("no features: a learned {}-wide embedding per vertex", node_embedding);
  return fmt::format("{} features", feature_dim);
}

std::vector<std::int64_t> parse_int_list_in(const std::string& text, const std::string& option,
                                            std::int64_t low, std::int64_t high) {
  if (text.empty())
    throw option_error(
        fmt::format("{}: the list is empty; give integers in [{}, {}]", option, low, high));
  auto values = parse_int_list(text, option);
  for (const auto v : values)
    if (v < low || v > high)
      throw option_error(
          fmt::format("{}: {} in '{}' is outside [{}, {}]", option, v, text, low, high));
  return values;
}

std::vector<std::int64_t> parse_fanouts(const std::string& text) {
  if (text.empty())
    throw option_error("--fanouts: the list is empty; give one count per hop, e.g. 15,10,5");
  const auto fanouts = parse_int_list(text, "--fanouts");
  for (const auto f : fanouts)
    if ((f < 1 && f != -1) || f > max_fanout)
      throw option_error(
          fmt::format("--fanouts: {} in '{}': each hop takes a count in [1, {}], or -1 for all", f,
                      text, max_fanout));
  if (static_cast<std::int64_t>(fanouts.size()) > max_layers)
    throw option_error(
        fmt::format("--fanouts: {} hops in '{}'; at most {}", fanouts.size(), text, max_layers));
  return fanouts;
}

namespace {

// The reason a new entry cannot be created in `dir`, or empty if it can.
std::string why_not_writable(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return fmt::format("{} does not exist", dir.string());
  if (!std::filesystem::is_directory(dir, ec))
    return fmt::format("{} is not a directory", dir.string());
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fmt::format("cannot write into {}: {}", dir.string(), std::strerror(errno));
  return {};
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

}  // namespace

void require_writable_file(const std::string& path, std::string_view option) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw option_error(fmt::format("{}: {} is a directory; give a file name", option, path));
  const auto reason = why_not_writable(directory_of(path));
  if (!reason.empty())
    throw option_error(fmt::format("{}: cannot write {}: {}", option, path, reason));
}

void require_writable_directory(const std::string& path, std::string_view option) {
  if (path.empty()) return;
  // The missing part is created by the run; the deepest existing part must
  // be a directory that can be written into.
  std::error_code ec;
  std::filesystem::path existing = path;
  while (!std::filesystem::exists(existing, ec) && existing.has_parent_path() &&
         existing.parent_path() != existing)
    existing = existing.parent_path();
  if (!std::filesystem::exists(existing, ec)) existing = ".";
  const auto reason = why_not_writable(existing);
  if (!reason.empty())
    throw option_error(fmt::format("{}: cannot use {} as a directory: {}", option, path, reason));
}

namespace {

// `path` made absolute, with symlinks of its existing part resolved and no
// empty or "." components, so that two spellings of one directory compare
// equal component by component.
std::vector<std::filesystem::path> resolved_components(const std::string& path) {
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) resolved = std::filesystem::absolute(path).lexically_normal();
  std::vector<std::filesystem::path> parts;
  for (const auto& part : resolved)
    if (!part.empty() && part != ".") parts.push_back(part);
  return parts;
}

// Whether `inner` is `outer` or lies inside it.
bool is_within(const std::vector<std::filesystem::path>& inner,
               const std::vector<std::filesystem::path>& outer) {
  return inner.size() >= outer.size() && std::equal(outer.begin(), outer.end(), inner.begin());
}

}  // namespace

void require_output_apart_from_input(const std::string& output, std::string_view output_option,
                                     const std::string& input, std::string_view input_option) {
  if (output.empty() || input.empty()) return;
  const auto out = resolved_components(output);
  const auto in = resolved_components(input);
  const char* how = nullptr;
  if (out == in)
    how = "is";
  else if (is_within(out, in))
    how = "lies inside";
  else if (is_within(in, out))
    how = "contains";
  if (how == nullptr) return;
  throw option_error(
      fmt::format("{} {} {} the input {} ({}): writing it would destroy the input; "
                  "give a directory apart from it",
                  output_option, output, how, input_option, input));
}

CLI::Validator integer_in(std::int64_t low, std::int64_t high) {
  const auto range = fmt::format("an integer in [{}, {}]", low, high);
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= low && value <= high)
          return {};
        return fmt::format("must be {}, got '{}'", range, text);
      },
      range);
}

CLI::Validator real_in(real_interval r) {
  const auto range = fmt::format("a number in {}{}, {}{}", r.low_open ? '(' : '[', r.low, r.high,
                                 r.high_open ? ')' : ']');
  return CLI::Validator(
      [r, range](std::string& text) -> std::string {
        // strtod, unlike from_chars, also reads the "nan" and "inf" that
        // CLI11 would accept, so that they are rejected here by name.
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(text.c_str(), &end);
        const bool parsed = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        // Checked as a float too, which most of these options are stored in:
        // --lr 1e-50 would become 0 and --dropout 0.99999999 would become 1.
        const auto within = [&r](double v) {
          const bool above = r.low_open ? v > r.low : v >= r.low;
          const bool below = r.high_open ? v < r.high : v <= r.high;
          return std::isfinite(v) && above && below;
        };
        if (parsed && within(value) && within(static_cast<float>(value))) return {};
        return fmt::format("must be {}, got '{}'", range, text);
      },
      range);
}

CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "must be a path, got an empty one (leave the option out instead)"
                            : std::string();
      },
      "PATH");
}

CLI::Validator one_of(std::vector<std::string> names) {
  const auto listed = fmt::format("{}", fmt::join(names, ", "));
  return CLI::Validator(
      [names = std::move(names), listed](std::string& text) -> std::string {
        if (std::ranges::find(names, text) != names.end()) return {};
        return fmt::format("must be one of {}; got '{}'", listed, text);
      },
      listed);
}

std::vector<std::string> layer_choices() {
  std::vector<std::string> names;
  for (const auto& layer : trainer::layer_table()) names.emplace_back(layer.name);
  return names;
}

std::string layers_help() {
  std::vector<std::string> lines;
  for (const auto& layer : trainer::layer_table())
    lines.push_back(fmt::format("{} ({})", layer.name, layer.summary));
  return fmt::format("{}", fmt::join(lines, ", "));
}

void add_batch_options(CLI::App& cmd, std::int64_t& batch_size, std::int64_t& bulk) {
  cmd.add_option("--batch-size", batch_size,
                 "seeds per minibatch (cluster-gcn: clusters per minibatch)")
      ->capture_default_str()
      ->check(integer_in(1, max_vertices));
  cmd.add_option("--bulk", bulk, "minibatches sampled together")
      ->capture_default_str()
      ->check(integer_in(1, max_queue));
}

void add_threads_option(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "worker threads (default: all cores)")
      ->check(integer_in(1, max_threads));
}

std::pair<double, double> parse_link_split(const std::string& text) {
  const auto comma = text.find(',');
  try {
    if (comma != std::string::npos) {
      std::size_t used_valid = 0;
      std::size_t used_test = 0;
      const auto valid_text = text.substr(0, comma);
      const auto test_text = text.substr(comma + 1);
      const double valid = std::stod(valid_text, &used_valid);
      const double test = std::stod(test_text, &used_test);
      if (used_valid == valid_text.size() && used_test == test_text.size()) {
        BULKGNN_EXPECTS(valid >= 0 && test >= 0 && valid + test < 1,
                        "--link-split {}: the held-out fractions must be at least 0 and leave "
                        "training edges (sum below 1)",
                        text);
        return {valid, test};
      }
    }
  } catch (const std::logic_error&) {  // NOLINT(bugprone-empty-catch): refused below
  }
  throw option_error(fmt::format(
      "--link-split must be VALID,TEST: the fractions of the edges held out (as 0.1,0.2); got "
      "'{}'",
      text));
}

}  // namespace bulkgnn::tools
