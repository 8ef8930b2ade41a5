#pragma once

#include "bulkgnn/core/parse.hpp"

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/session/session.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulkgnn::tools {

// Each adds one subcommand to the `bulkgnn` application; the subcommand runs
// from its callback and reports failures by throwing bulkgnn::error.
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_split_links_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_train_command(CLI::App& app);

// Opens DATA (native or OGB raw), or with an empty path generates the
// embedded default: a contextual SBM of 100,000 vertices, 8 classes and 64
// features, whose labels a GNN can learn (no download needed). `quiet`
// silences every progress display of this process from here on.
data::dataset open_dataset_or_default(const std::string& path, bool quiet);

// DATA of a command that runs over MPI ranks: this rank's part of a
// partitioned dataset (session::open_shard; `features`: its feature rows
// too), else the whole dataset (open_dataset_or_default).
[[nodiscard]] session::run_data open_run_data(const std::string& path,
                                              const session::layout_options& layout, bool features,
                                              bool quiet);

// Starts `session` (collective) over whichever of `data` is set.
void start_session(std::optional<session::run_session>& session, const session::run_data& data,
                   const session::layout_options& layout, bool partition_features,
                   const std::vector<session::setting>& shared);

// The metrics' "final" record: the best validation epoch (from 1) and its
// accuracies, or nulls when no epoch was evaluated.
nlohmann::json final_accuracy_json(const std::optional<std::int64_t>& best_epoch, double valid_acc,
                                   double test_acc);

// An accuracy as printed in epoch lines: four decimals, or a dash where the
// epoch was not evaluated.
[[nodiscard]] std::string accuracy_text(const std::optional<double>& accuracy);

// What a run's model reads, as its first line says: `feature_dim` features,
// or a learned table of `node_embedding` columns (> 0) in their place.
[[nodiscard]] std::string model_inputs_text(std::int64_t feature_dim, std::int64_t node_embedding);

// An epoch line's second part: "  stages busy/wait s: NAME B/W ..." and the
// overlap with the slowest stage (no newline).
void print_pipeline_stages(const loader::epoch_report& pipeline);

// Upper bounds of numeric options: beyond them a value is a typo, not a run.
inline constexpr std::int64_t max_layers = 64;
inline constexpr std::int64_t max_width = std::int64_t{1} << 20;  // --hidden, --features
inline constexpr std::int64_t max_classes = std::int64_t{1} << 20;
inline constexpr std::int64_t max_vertices = (std::int64_t{1} << 31) - 1;
inline constexpr std::int64_t max_edges = std::int64_t{1} << 40;
inline constexpr std::int64_t max_fanout = std::int64_t{1} << 24;  // as the sampler allows
inline constexpr std::int64_t max_queue = std::int64_t{1} << 20;   // --bulk, queue depths
inline constexpr std::int64_t max_epochs = (std::int64_t{1} << 30) - 1;
inline constexpr std::int64_t max_seed = (std::int64_t{1} << 32) - 1;
inline constexpr std::int64_t max_threads = 4096;
inline constexpr std::int64_t max_ranks = std::int64_t{1} << 24;

// Checks for CLI::Option::check whose message gives the allowed range; CLI11
// puts the option's name in front ("--layers: must be an integer in [1, 64],
// got '0'"), and main() reports it as a usage error.
[[nodiscard]] CLI::Validator integer_in(std::int64_t low, std::int64_t high);

// A finite number (never nan or inf) in [low, high], or with the open ends
// excluded.
struct real_interval {
  double low = 0;
  double high = 0;
  bool low_open = false;
  bool high_open = false;
};
[[nodiscard]] CLI::Validator real_in(real_interval range);

// A path that is not empty: an empty DATA, OUT_DIR or output file would
// otherwise mean "the default" or "none" without a word.
[[nodiscard]] CLI::Validator non_empty_path();

// One of `names`.
[[nodiscard]] CLI::Validator one_of(std::vector<std::string> names);
// The registered layer kinds (trainer/layer_table.hpp): their names, for
// one_of, and "name: summary" lines for help.
[[nodiscard]] std::vector<std::string> layer_choices();
[[nodiscard]] std::string layers_help();

// --threads: 1 to max_threads; left out, all cores (`threads` stays 0).
void add_threads_option(CLI::App& cmd, int& threads);

// --batch-size (seeds per minibatch) and --bulk (minibatches sampled
// together), as sample and train both take them.
void add_batch_options(CLI::App& cmd, std::int64_t& batch_size, std::int64_t& bulk);

// A comma-separated list of integers, each in [low, high]; option_error
// naming `option` and the range otherwise (an empty list included).
[[nodiscard]] std::vector<std::int64_t> parse_int_list_in(const std::string& text,
                                                          const std::string& option,
                                                          std::int64_t low, std::int64_t high);

// --fanouts: one entry per hop (at most max_layers), each in [1, max_fanout]
// or -1 (every neighbour).
[[nodiscard]] std::vector<std::int64_t> parse_fanouts(const std::string& text);

// Output paths, checked before any work so that a run never fails at its end
// for want of a place to write. option_error naming `option` unless `path`
// (empty: not asked for) can be written as a file: its directory exists and
// is writable, and it is not itself a directory.
void require_writable_file(const std::string& path, std::string_view option);
// option_error unless the directory `output` (given as `output_option`) is
// apart from the input `input`: not the same directory, not inside it and
// not containing it (symlinks resolved), since a command writes its output
// whole and would destroy the input. Empty paths are not checked.
void require_output_apart_from_input(const std::string& output, std::string_view output_option,
                                     const std::string& input, std::string_view input_option);
// Likewise for a directory that is written into (created if missing): it is
// a writable directory, or its nearest existing ancestor is one.
void require_writable_directory(const std::string& path, std::string_view option);

// --link-split: "VALID,TEST", the fractions of the edges a random link split
// holds out; option_error naming --link-split otherwise.
[[nodiscard]] std::pair<double, double> parse_link_split(const std::string& text);

}  // namespace bulkgnn::tools
