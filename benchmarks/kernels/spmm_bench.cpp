// The aggregation step of a GNN layer, Y = A·X, on the cpu back end against
// the serial reference: a random CSR matrix (100,000 rows, 10 entries a row,
// weighted) times 64 and 256 feature columns. items_per_second counts
// multiply-adds (stored entries × feature columns).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "bulkgnn/kernels/spmm.hpp"

namespace {

using namespace bulkgnn;

constexpr std::int64_t rows = 100'000;
constexpr int degree = 10;

const csr_matrix& matrix() {
  static const csr_matrix a = [] {
    csr_matrix m;
    m.rows = rows;
    m.cols = rows;
    std::mt19937_64 gen(1);
    std::uniform_int_distribution<vertex_t> column(0, static_cast<vertex_t>(rows - 1));
    std::uniform_real_distribution<float> value(0.1f, 1.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (int k = 0; k < degree; ++k) {
        m.indices.push_back(column(gen));
        m.values.push_back(value(gen));
      }
      m.indptr.push_back(static_cast<edge_t>(m.indices.size()));
    }
    return m;
  }();
  return a;
}

void spmm_backend(benchmark::State& state, backend kind) {
  const auto& a = matrix();
  const std::int64_t width = state.range(0);
  std::vector<float> x(static_cast<std::size_t>(rows * width), 1.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    kernels::spmm(executor{kind}, a.view(), {rows, width, x}, {rows, width, y});
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * a.nnz() * width);
}

BENCHMARK_CAPTURE(spmm_backend, reference, backend::reference)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(spmm_backend, cpu, backend::cpu)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
