#pragma once

// Marks a function that host code and CUDA kernels both call: the per-element
// rules of the kernels (kernels/include/bulkgnn/kernels/rules/) are written
// once, so every back end computes an element the same way.
#if defined(__CUDACC__)
#define BULKGNN_HOST_DEVICE __host__ __device__
#else
#define BULKGNN_HOST_DEVICE
#endif
