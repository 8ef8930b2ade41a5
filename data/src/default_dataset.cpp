#include "bulkgnn/data/default_dataset.hpp"

#include "bulkgnn/core/interrupt.hpp"
#include "bulkgnn/core/staging.hpp"
#include "bulkgnn/data/generators.hpp"

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

namespace bulkgnn::data {

dataset open_default_dataset(bool quiet) {
  // Named like all staging, so that what a killed run leaves is swept.
  constexpr const char* staging_prefix = "bulkgnn-default-";
  // A process may open the default more than once (a Python session), on
  // several threads at a time.
  static std::atomic<int> opened{0};
  const interrupt_scope polled;  // outlives the staging directory
  const auto tmp = std::filesystem::temp_directory_path();
  sweep_stale_staging(tmp, staging_prefix);
  const auto dir = tmp / (staging_name(staging_prefix) + "-" + std::to_string(opened++));
  struct remove_on_exit {
    std::filesystem::path dir;
    ~remove_on_exit() {
      std::error_code ignored;  // the arrays stay mapped after their files are unlinked
      std::filesystem::remove_all(dir, ignored);
    }
  } remove{dir};
  const csbm_options options{.nodes = 100000,
                             .classes = 8,
                             .average_degree = 12,
                             .homophily = 0.7,
                             .features = 64,
                             .signal = 1.0,
                             .seed = 0,
                             .quiet = quiet};
  generate_csbm(dir, options);
  return dataset::open_native(dir);
}

}  // namespace bulkgnn::data
