#pragma once

// Row sources whose implementation stays out of the public headers.

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <memory>

namespace bulkgnn::distributed::detail {

// 2D grid on CombBLAS (sharded_rows_2d.cpp); built only with CombBLAS.
[[nodiscard]] std::unique_ptr<sampler::row_source> make_combblas_grid_rows(
    const comm::communicator& sampling, csr_view graph, const vertex_partition& partition);

}  // namespace bulkgnn::distributed::detail
