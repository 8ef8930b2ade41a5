#include "bulkgnn/core/csr.hpp"

#include <gtest/gtest.h>

namespace bulkgnn {
namespace {

csr_matrix small_matrix() {
  csr_matrix m;
  m.rows = 3;
  m.cols = 4;
  m.indptr = {0, 2, 2, 3};
  m.indices = {0, 3, 1};
  return m;
}

TEST(FindCsrProblem, AcceptsAWellFormedMatrix) {
  EXPECT_EQ(find_csr_problem(small_matrix().view()), "");
}

TEST(FindCsrProblem, RejectsAColumnOutOfRange) {
  auto m = small_matrix();
  m.indices[1] = 4;
  EXPECT_NE(find_csr_problem(m.view()).find("outside"), std::string::npos);
}

TEST(FindCsrProblem, RejectsADecreasingIndptr) {
  auto m = small_matrix();
  m.indptr = {0, 2, 1, 3};
  EXPECT_NE(find_csr_problem(m.view()).find("decreases"), std::string::npos);
}

TEST(FindCsrProblem, RejectsValuesOfTheWrongLength) {
  auto m = small_matrix();
  m.values = {1.0f};
  EXPECT_NE(find_csr_problem(m.view()).find("values"), std::string::npos);
}

TEST(CsrView, RowsAreSpansIntoTheArrays) {
  const auto m = small_matrix();
  const auto v = m.view();
  EXPECT_EQ(v.degree(0), 2);
  EXPECT_EQ(v.row(0)[1], 3);
  EXPECT_TRUE(v.row(1).empty());
  EXPECT_EQ(v.nnz(), 3);
}

}  // namespace
}  // namespace bulkgnn
