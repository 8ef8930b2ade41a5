#include "check.cuh"

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::kernels::cuda {

void throw_cuda_error(const char* call, const char* file, int line, const char* message) {
  throw error(fmt::format("{} failed at {}:{}: {}", call, file, line, message));
}

void throw_argument_error(const char* message) { throw option_error(message); }

}  // namespace bulkgnn::kernels::cuda
