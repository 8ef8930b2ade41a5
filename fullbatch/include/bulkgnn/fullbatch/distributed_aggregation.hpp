#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/fullbatch/grid.hpp"
#include "bulkgnn/trainer/aggregation.hpp"

#include <cstdint>
#include <memory>

namespace bulkgnn::fullbatch {

// The sparse step of full-batch training on one rank of a grid (grid.hpp):
// the model calls forward and backward with this rank's rows of H (or of
// dLoss/dZ) and gets this rank's rows of Â·H (or Âᵀ·G), whatever the other
// ranks had to send. The model's blocks only carry the shape (this rank's
// rows, square); the tiles of Â live here. Traffic is counted under the
// stages "forward" and "backward" of the world communicator's log.
class distributed_aggregation : public trainer::aggregation {
 public:
  // The rows this rank computes: its part's new ids [first, last).
  [[nodiscard]] std::int64_t first_row() const { return first_row_; }
  [[nodiscard]] std::int64_t row_count() const { return row_count_; }
  // Compress what crosses ranks at this rate from the next product on (1:
  // send floats). option_error unless every message of the grid goes to one
  // rank and is used there as it arrives (1d, sar) or the rate is 1.
  virtual void set_compression_rate(int rate) = 0;
  // The grid's tiles of Â and Âᵀ plus the most its buffers held at once for
  // one product since the last reset: what the grid costs in memory besides
  // the model's activations.
  [[nodiscard]] std::int64_t peak_transient_bytes() const { return peak_transient_bytes_; }
  void reset_peak() { peak_transient_bytes_ = tile_bytes_; }

 protected:
  distributed_aggregation(std::int64_t first_row, std::int64_t row_count)
      : first_row_(first_row), row_count_(row_count) {}
  // The tiles, held from construction on.
  void set_tile_bytes(std::int64_t bytes) {
    tile_bytes_ = bytes;
    peak_transient_bytes_ = std::max(peak_transient_bytes_, bytes);
  }
  // The buffers one product held at once.
  void note_buffer_bytes(std::int64_t bytes) {
    peak_transient_bytes_ = std::max(peak_transient_bytes_, tile_bytes_ + bytes);
  }

 private:
  std::int64_t first_row_;
  std::int64_t row_count_;
  std::int64_t tile_bytes_ = 0;
  std::int64_t peak_transient_bytes_ = 0;
};

// Builds this rank's aggregation from the rows of Â that its part holds
// (`part_rows`: the part's rows of Â, columns as the partition's new ids;
// on 1.5d every replica of a team passes the team's rows). Collective over
// `world` (every rank, ranked as `layout` numbers them): it routes each
// entry of Â and Âᵀ to the ranks whose tiles hold it, counted under the
// stage "setup".
[[nodiscard]] std::unique_ptr<distributed_aggregation> make_distributed_aggregation(
    const grid_layout& layout, comm::communicator& world,
    const distributed::vertex_partition& partition, const csr_matrix& part_rows);

}  // namespace bulkgnn::fullbatch
