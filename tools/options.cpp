#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/generators.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace bulkgnn::tools {

data::dataset open_dataset_or_default(const std::string& path, bool quiet) {
  if (!path.empty()) return data::dataset::open(path);
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("bulkgnn-default-{}", ::getpid());
  const data::csbm_options options{.nodes = 100000,
                                   .classes = 8,
                                   .average_degree = 12,
                                   .homophily = 0.7,
                                   .features = 64,
                                   .signal = 1.0,
                                   .seed = 0,
                                   .quiet = quiet};
  if (!quiet)
    fmt::print(stderr, "no DATA given: generating the embedded default (CSBM, 100000 vertices)\n");
  data::generate_csbm(dir, options);
  auto ds = data::dataset::open_native(dir);
  // The arrays stay mapped after their files are unlinked.
  std::filesystem::remove_all(dir);
  return ds;
}

kernels::backend parse_backend(const std::string& name) {
  if (name == "cpu") return kernels::backend::cpu;
  if (name == "reference") return kernels::backend::reference;
  if (name == "cuda") return kernels::backend::cuda;
  throw option_error("--backend must be cpu, reference or cuda; got '" + name + "'");
}

}  // namespace bulkgnn::tools
