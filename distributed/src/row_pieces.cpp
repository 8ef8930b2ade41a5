#include "row_pieces.hpp"

#include <algorithm>

namespace bulkgnn::distributed::detail {

std::vector<vertex_t> distinct_vertices(std::span<const vertex_t> vertices) {
  std::vector<vertex_t> distinct(vertices.begin(), vertices.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

sampler::gathered_rows rows_for_requests(csr_matrix rows_of_distinct,
                                         const std::vector<vertex_t>& distinct,
                                         std::span<const vertex_t> vertices) {
  std::vector<vertex_t> positions(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i)
    positions[i] = static_cast<vertex_t>(
        std::lower_bound(distinct.begin(), distinct.end(), vertices[i]) - distinct.begin());
  sampler::gathered_rows out;
  out.fetched = true;
  out.fetched_rows = std::move(rows_of_distinct);
  out.rows = out.fetched_rows.view();
  out.positions = std::move(positions);
  out.row_of = out.positions;
  return out;
}

sampler::gathered_rows rows_from_owners(const received_streams& answered,
                                        std::span<const int> owner, std::int64_t num_vertices,
                                        const std::vector<vertex_t>& distinct,
                                        std::span<const vertex_t> vertices) {
  csr_matrix rows_of_distinct;
  rows_of_distinct.cols = num_vertices;
  row_reader from_owners(answered.entries, answered.weights);
  for (const vertex_t v : distinct) from_owners.append_next_row(owner[v], rows_of_distinct);
  return rows_for_requests(std::move(rows_of_distinct), distinct, vertices);
}

piece_reader::piece_reader(const std::vector<std::vector<vertex_t>>& entries,
                           const std::vector<std::vector<float>>& weights)
    : entries_(entries),
      weights_(weights),
      entry_cursor_(entries.size(), 0),
      weight_cursor_(entries.size(), 0) {}

void piece_reader::append_next_row(csr_matrix& rows) {
  const bool weighted = !weights_.empty();
  std::size_t length = 0;
  for (std::size_t s = 0; s < entries_.size(); ++s)
    length += static_cast<std::size_t>(entries_[s][entry_cursor_[s]]);
  const auto begin = rows.indices.size();
  rows.indices.resize(begin + length);
  if (weighted) rows.values.resize(begin + length);
  for (std::size_t s = 0; s < entries_.size(); ++s) {
    const auto& stream = entries_[s];
    auto& at = entry_cursor_[s];
    const auto count = static_cast<std::size_t>(stream[at++]);
    for (std::size_t e = 0; e < count; ++e, at += 2) {
      const auto slot = begin + static_cast<std::size_t>(stream[at + 1]);
      rows.indices[slot] = stream[at];
      if (weighted) rows.values[slot] = weights_[s][weight_cursor_[s]++];
    }
  }
  rows.indptr.push_back(static_cast<edge_t>(rows.indices.size()));
  ++rows.rows;
}

void write_row(csr_view rows, std::int64_t row, piece_stream& out) {
  const auto columns = rows.row(row);
  out.entries.push_back(static_cast<vertex_t>(columns.size()));
  out.entries.insert(out.entries.end(), columns.begin(), columns.end());
  if (rows.weighted()) {
    const auto values = rows.row_values(row);
    out.weights.insert(out.weights.end(), values.begin(), values.end());
  }
}

row_reader::row_reader(const std::vector<std::vector<vertex_t>>& entries,
                       const std::vector<std::vector<float>>& weights)
    : entries_(entries),
      weights_(weights),
      entry_cursor_(entries.size(), 0),
      weight_cursor_(entries.size(), 0) {}

void row_reader::append_next_row(int source, csr_matrix& rows) {
  const auto& stream = entries_[source];
  auto& at = entry_cursor_[source];
  const auto length = static_cast<std::size_t>(stream[at]);
  const auto begin = stream.begin() + static_cast<std::ptrdiff_t>(at + 1);
  rows.indices.insert(rows.indices.end(), begin, begin + static_cast<std::ptrdiff_t>(length));
  at += 1 + length;
  if (!weights_.empty()) {
    const auto values =
        weights_[source].begin() + static_cast<std::ptrdiff_t>(weight_cursor_[source]);
    rows.values.insert(rows.values.end(), values, values + static_cast<std::ptrdiff_t>(length));
    weight_cursor_[source] += length;
  }
  rows.indptr.push_back(static_cast<edge_t>(rows.indices.size()));
  ++rows.rows;
}

void row_block::write_piece(std::int64_t row, piece_stream& out) const {
  const auto begin = indptr[row], end = indptr[row + 1];
  out.entries.push_back(static_cast<vertex_t>(end - begin));
  for (auto e = begin; e < end; ++e) {
    out.entries.push_back(columns[e]);
    out.entries.push_back(slots[e]);
  }
  if (!weights.empty())
    out.weights.insert(out.weights.end(), weights.begin() + begin, weights.begin() + end);
}

received_streams exchange(comm::communicator& comm, std::vector<piece_stream> out, bool weighted) {
  std::vector<std::vector<vertex_t>> entries(out.size());
  std::vector<std::vector<float>> weights(out.size());
  for (std::size_t d = 0; d < out.size(); ++d) {
    entries[d] = std::move(out[d].entries);
    weights[d] = std::move(out[d].weights);
  }
  received_streams received;
  received.entries = comm.all_to_all(entries);
  if (weighted) received.weights = comm.all_to_all(weights);
  return received;
}

}  // namespace bulkgnn::distributed::detail
