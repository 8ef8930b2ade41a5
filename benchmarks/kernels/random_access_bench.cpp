// This machine's random-read rate: the practical limit for sampling, since
// each sampled edge needs at least one read from a random place in the graph.
// Reads 4-byte words at random positions of a table far larger than the
// caches, keeping `in_flight` independent loads outstanding per thread (as a
// sampler working on several rows at once does). Google Benchmark runs the
// loop on 1 and 2 threads; items_per_second sums over threads.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

namespace {

constexpr std::size_t table_words = std::size_t{1} << 27;  // 512 MiB

const std::vector<std::uint32_t>& table() {
  static const std::vector<std::uint32_t> words = [] {
    std::vector<std::uint32_t> w(table_words);
    std::iota(w.begin(), w.end(), 0u);
    return w;
  }();
  return words;
}

std::uint64_t xorshift(std::uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

template <int in_flight>
void random_reads(benchmark::State& state) {
  const auto& words = table();
  std::uint64_t rng[in_flight];
  for (int i = 0; i < in_flight; ++i)
    rng[i] = 0x9E3779B97F4A7C15ull * (i + 1 + 64 * state.thread_index());
  constexpr int reads_per_iteration = 1 << 16;
  std::uint64_t sum = 0;
  for (auto _ : state) {
    for (int r = 0; r < reads_per_iteration; r += in_flight)
      for (int i = 0; i < in_flight; ++i) sum += words[xorshift(rng[i]) & (table_words - 1)];
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * reads_per_iteration);
}

BENCHMARK(random_reads<1>)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(random_reads<8>)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(random_reads<16>)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
