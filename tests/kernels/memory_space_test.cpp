#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "fake_device_memory.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

// The front doors refuse an argument that lives where the executor cannot
// reach, naming the function, the argument and the space, before reading it.
namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

csr_matrix on_device(const csr_matrix& host, memory_resource& device) {
  csr_matrix m;
  m.rows = host.rows;
  m.cols = host.cols;
  m.indptr = buffer<edge_t>(host.indptr.size(), device);
  m.indices = buffer<vertex_t>(host.indices.size(), device);
  return m;
}

void expect_refused(const std::function<void()>& call, const std::string& function,
                    const std::string& argument) {
  try {
    call();
    FAIL() << function << " accepted device memory";
  } catch (const option_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(function + ": " + argument + " is in device memory"), std::string::npos)
        << what;
  }
}

TEST(MemorySpaces, HostExecutorsRefuseDeviceCsrOperands) {
  std::mt19937_64 gen(1);
  const auto host = testing::random_csr(gen, {.rows = 8, .cols = 8, .weighted = false});
  bulkgnn::testing::fake_device_memory device;
  const auto dev = on_device(host, device);
  for (const executor& exec : {reference_exec, cpu_exec}) {
    expect_refused([&] { (void)spgemm(exec, dev.view(), host.view()); }, "spgemm", "a");
    expect_refused([&] { (void)spgemm(exec, host.view(), dev.view()); }, "spgemm", "b");
    expect_refused([&] { (void)transpose(exec, dev.view()); }, "transpose", "a");
    const std::vector<vertex_t> rows{0, 1};
    const std::vector<std::uint32_t> minibatch(rows.size(), 0);
    expect_refused(
        [&] {
          (void)sample_rows(exec, dev.view(), rows, {.minibatch_of_row = minibatch}, {.fanout = 2});
        },
        "sample_rows", "a");
  }
}

TEST(MemorySpaces, HostExecutorsRefuseDeviceDenseOperands) {
  std::mt19937_64 gen(2);
  const auto a = testing::random_csr(gen, {.rows = 4, .cols = 4});
  std::vector<float> x(16, 1.0f), y(16);
  const dense_view<const float> device_x{4, 4, x, memory_space::device};
  const dense_view<float> device_y{4, 4, y, memory_space::device};
  for (const executor& exec : {reference_exec, cpu_exec}) {
    expect_refused([&] { spmm(exec, a.view(), device_x, {4, 4, y}); }, "spmm", "x");
    expect_refused([&] { spmm(exec, a.view(), {4, 4, x}, device_y); }, "spmm", "y");
  }
}

TEST(MemorySpaces, PinnedHostMemoryIsHostMemoryToHostExecutors) {
  std::mt19937_64 gen(3);
  const auto a = testing::random_csr(gen, {.rows = 4, .cols = 4});
  std::vector<float> x(16, 1.0f), expected(16), pinned_y(16);
  spmm(cpu_exec, a.view(), {4, 4, x}, {4, 4, expected});
  spmm(cpu_exec, a.view(), {4, 4, x, memory_space::pinned_host},
       {4, 4, pinned_y, memory_space::pinned_host});
  EXPECT_EQ(testing::bits(expected), testing::bits(pinned_y));
}

TEST(MemorySpaces, ExecutorThreadsDoNotChangeResults) {
  std::mt19937_64 gen(4);
  const auto a = testing::random_csr(gen, {.rows = 3000, .cols = 2000, .mean_degree = 12});
  const auto b = testing::random_csr(gen, {.rows = 2000, .cols = 500, .mean_degree = 6});
  const auto expected = spgemm(reference_exec, a.view(), b.view());
  for (const int threads : {1, 2, 5}) {
    SCOPED_TRACE(threads);
    testing::expect_identical(expected,
                              spgemm(executor(backend::cpu, threads), a.view(), b.view()));
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
