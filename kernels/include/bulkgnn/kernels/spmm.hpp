#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <span>

namespace bulkgnn::kernels {

// Sparse-dense product Y = A·X, the aggregation step of a GNN layer: row r of
// Y is the sum over row r's stored entries, in stored order, of a(r, c)·X[c]
// (a pattern matrix counts as all ones; an empty row gives zeros). Sums are
// accumulated in float in that order, so every back end is bit-identical.
// Y must be a.rows × x.cols, x must have a.cols rows; Y is overwritten and
// must not overlap x. Every dense view must hold exactly rows × cols elements.
void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y);

// Sampled dense-dense product: out[e] = Σ_k a[r, k]·b[c, k] for each stored
// entry e = (r, c) of `pattern`, in stored order (its values, if any, are
// not read). With a = ∂L/∂Y and b = X it is the gradient of Y = A·X with
// respect to A's values, the seam a layer that computes per-edge values (an
// attention coefficient) needs; with a = b = node embeddings it scores each
// edge (a dot-product decoder). Each sum runs from k = 0 in float
// (rules::dot_in_order), so every back end is bit-identical. a must have
// pattern.rows rows and b pattern.cols rows, both with the same columns; out
// holds pattern.nnz() values and must overlap neither.
void sddmm(const executor& exec, csr_view pattern, dense_view<const float> a,
           dense_view<const float> b, std::span<float> out);

// The transpose of `a`, values kept (none if `a` is a pattern). Row c of the
// result lists the rows of `a` that hold column c in increasing order, so a
// product with the transpose (the backward pass of spmm) sums in a fixed
// order on every back end. Repeated columns in a row of `a` stay in stored
// order. `a` may have at most 2^31 - 1 rows (they become column indices).
[[nodiscard]] csr_matrix transpose(const executor& exec, csr_view a);

// Row gather out[i] = x[rows[i]] into a contiguous buffer (the features of a
// minibatch's input vertices). out must be rows.size() × x.cols and must not
// overlap x; every row id must be in [0, x.rows).
void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out);

// Scaled row scatter out[rows[i]] = scale · x[i] (a gradient of the rows a
// loss reads, placed among all rows); the other rows of out keep their
// values. x must be rows.size() × out.cols and must not overlap out; every
// row id must be in [0, out.rows) and appear once.
void scatter_dense_rows(const executor& exec, dense_view<const float> x,
                        std::span<const vertex_t> rows, float scale, dense_view<float> out);

// Node features split for a GPU: the whole table `all` where it is large
// and slow to reach (pinned host memory, read through UVA), and copies of
// the hot vertices' rows in `cache` (device memory). slot_of[v] is v's row
// of the cache, or -1. A cached row equals the table's, so where a row is
// read from never changes what is gathered, only how fast.
struct cached_rows {
  dense_view<const float> all;
  dense_view<const float> cache;
  std::span<const std::int32_t> slot_of;  // one per row of `all`
};

// gather_dense_rows from cached rows; returns how many of the rows came
// from the cache (the rest were read from `all`).
std::int64_t gather_cached_rows(const executor& exec, const cached_rows& x,
                                std::span<const vertex_t> rows, dense_view<float> out);

}  // namespace bulkgnn::kernels
