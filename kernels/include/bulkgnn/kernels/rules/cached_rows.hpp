#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/types.hpp"

// Where gather_cached_rows reads one row from, for every back end.
namespace bulkgnn::kernels::rules {

// Row v's first element: in the cache when v has a slot there, else in the
// whole table.
BULKGNN_HOST_DEVICE inline const float* cached_row_source(const float* all, const float* cache,
                                                          const std::int32_t* slot_of,
                                                          std::int64_t cols, vertex_t v) {
  const std::int32_t slot = slot_of[v];
  return slot >= 0 ? cache + static_cast<std::int64_t>(slot) * cols
                   : all + static_cast<std::int64_t>(v) * cols;
}

}  // namespace bulkgnn::kernels::rules
