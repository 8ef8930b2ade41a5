#pragma once

#include "bulkgnn/session/session.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::tools {

void add_distribution_options(CLI::App& cmd, session::layout_options& layout, bool with_features);

// Throws internal_error naming each option of `cmd` that is neither shared
// (in `shared`, DATA, which ranks compare by content, or a distribution
// option) nor in `per_rank`: every option must be decided one way or the
// other, so that a new one cannot be forgotten.
void require_every_option_decided(const CLI::App& cmd, const std::vector<session::setting>& shared,
                                  std::span<const std::string_view> per_rank);

// A library message in the command line's terms: the option fields the
// libraries name (layout_options.grid, ...) become the flags that set them
// (--grid, ...).
[[nodiscard]] std::string in_flag_terms(std::string message);

// One line per stage: bytes sent and received, summed over the ranks, and the
// largest rank's.
void print_traffic(const nlohmann::json& report);

// One line: bytes sent per stage over all ranks, from since_previous().
void print_epoch_traffic(const nlohmann::json& totals);
// One epoch's feature-cache counts (run_session::end_epoch), if any.
void print_feature_cache(const nlohmann::json& counts);

}  // namespace bulkgnn::tools
