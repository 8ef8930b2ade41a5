#include "cublas_api.hpp"

#include "bulkgnn/core/error.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// The folder of the libcudart this process runs with, where the toolkit
// keeps libcublas too.
std::string cudart_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 ||
      info.dli_fname == nullptr)
    return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

void* open_cublas() {
  const std::string name = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);
  if (void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
  const std::string first_reason = dlerror();
  std::string second_reason = "no libcudart folder to look in";
  const std::string folder = cudart_folder();
  if (!folder.empty()) {
    const std::string beside = folder + "/" + name;
    if (void* library = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
    second_reason = dlerror();
  }
  throw error(fmt::format(
      "the fast GEMM (--gemm fast, the GPU's default) needs {}, which could not be opened: {}; "
      "{}; give --gemm exact, or put the CUDA toolkit's libraries on LD_LIBRARY_PATH",
      name, first_reason, second_reason));
}

template <class Function>
Function symbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  if (address == nullptr) throw error(fmt::format("libcublas has no {}: {}", name, dlerror()));
  return reinterpret_cast<Function>(address);
}

cublas_api load_cublas() {
  void* library = open_cublas();
  cublas_api api;
  api.create = symbol<decltype(api.create)>(library, "cublasCreate_v2");
  api.destroy = symbol<decltype(api.destroy)>(library, "cublasDestroy_v2");
  api.set_stream = symbol<decltype(api.set_stream)>(library, "cublasSetStream_v2");
  api.set_math_mode = symbol<decltype(api.set_math_mode)>(library, "cublasSetMathMode");
  api.sgemm = symbol<decltype(api.sgemm)>(library, "cublasSgemm_v2");
  api.sgemv = symbol<decltype(api.sgemv)>(library, "cublasSgemv_v2");
  api.status_string = symbol<decltype(api.status_string)>(library, "cublasGetStatusString");
  return api;
}

}  // namespace

const cublas_api& cublas() {
  static const cublas_api api = load_cublas();
  return api;
}

int cublas_size(std::int64_t size, const char* function) {
  if (size > std::numeric_limits<int>::max())
    throw error(
        fmt::format("{}: a dimension of {} passes cuBLAS's limit of 2^31 - 1", function, size));
  return static_cast<int>(size);
}

void throw_cublas_error(const char* call, const char* file, int line, cublasStatus_t status) {
  throw error(
      fmt::format("{} failed at {}:{}: {}", call, file, line, cublas().status_string(status)));
}

}  // namespace bulkgnn::kernels::cuda
