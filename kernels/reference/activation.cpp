#include "bulkgnn/kernels/rules/dropout.hpp"

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void relu(dense_view<float> x) {
  for (float& v : x.data) v = rules::relu(v);
}

// Row by row, one Philox word per two entries, drawn in order.
void relu_dropout(dense_view<float> x, rules::dropout_threshold threshold, rng_key step,
                  std::span<const vertex_t> row_ids) {
  for (std::int64_t r = 0; r < x.rows; ++r) {
    const auto row_id = static_cast<std::uint32_t>(row_ids.empty() ? r : row_ids[r]);
    philox_stream stream(rules::dropout_row_stream(step, row_id));
    std::uint32_t word = 0;
    const auto row = x.row(r);
    for (std::int64_t j = 0; j < x.cols; ++j) {
      if (j % 2 == 0) word = stream.next_u32();
      row[j] = rules::relu_dropout(row[j], rules::dropout_keeps(word, j, threshold.bits),
                                   threshold.scale);
    }
  }
}

void relu_dropout_backward(dense_view<const float> y, float scale, dense_view<float> grad) {
  for (std::size_t i = 0; i < y.data.size(); ++i)
    grad.data[i] = rules::relu_dropout_backward(y.data[i], grad.data[i], scale);
}

}  // namespace bulkgnn::kernels::reference
