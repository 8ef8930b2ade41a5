#pragma once

#include "bulkgnn/core/parse.hpp"

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/kernels/executor.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bulkgnn::tools {

// Each adds one subcommand to the `bulkgnn` application; the subcommand runs
// from its callback and reports failures by throwing bulkgnn::error.
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_train_command(CLI::App& app);

// Opens DATA (native or OGB raw), or with an empty path generates the
// embedded default: a contextual SBM of 100,000 vertices, 8 classes and 64
// features, whose labels a GNN can learn (no download needed).
data::dataset open_dataset_or_default(const std::string& path, bool quiet);

// The --backend option: cpu, reference or cuda.
kernels::backend parse_backend(const std::string& name);

}  // namespace bulkgnn::tools
