#include "bulkgnn/data/ogb_import.hpp"

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::data {

void import_ogb(const std::filesystem::path& ogb_dir, const std::filesystem::path&,
                const ogb_import_options&) {
  throw internal_error("import_ogb is not implemented yet: " + ogb_dir.string());
}

}  // namespace bulkgnn::data
