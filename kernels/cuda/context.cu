#include "check.cuh"
#include "context.cuh"
#include "kernels.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// Makes `device` current on the calling thread for the scope: pipeline
// stages run on threads of their own, each of which starts on device 0.
class device_scope {
 public:
  explicit device_scope(int device) {
    BULKGNN_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) BULKGNN_CUDA_CHECK(cudaSetDevice(device));
  }
  ~device_scope() { (void)cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

// Device memory allocated and freed in stream order from the device's pool
// (cudaMallocAsync): a buffer freed while kernels that read it are still
// queued is reused only after them.
class pooled_device_memory final : public memory_resource {
 public:
  pooled_device_memory(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    device_scope on(device_);
    void* pointer = nullptr;
    BULKGNN_CUDA_CHECK(cudaMallocAsync(&pointer, bytes, stream_));
    return pointer;
  }
  void deallocate(void* pointer, std::size_t) noexcept override {
    if (pointer == nullptr) return;
    int previous = 0;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(device_);
    (void)cudaFreeAsync(pointer, stream_);
    (void)cudaSetDevice(previous);
  }
  // Buffers copy synchronously: the copy has landed when this returns.
  void copy(void* destination, const void* source, std::size_t bytes) override {
    if (bytes == 0) return;
    device_scope on(device_);
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream_));
    BULKGNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  memory_space space() const noexcept override { return memory_space::device; }

 private:
  int device_;
  cudaStream_t stream_;
};

// Page-locked host memory, mapped for every device (UVA), so kernels read it
// in place and copies to the device run asynchronously.
class pinned_host_memory final : public memory_resource {
 public:
  explicit pinned_host_memory(int device) : device_(device) {}

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    void* pointer = nullptr;
    BULKGNN_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    return pointer;
  }
  // Kernels queued on any stream may still read the memory through UVA:
  // the device finishes them before it is freed (CUDA does not promise that
  // cudaFreeHost waits for them).
  void deallocate(void* pointer, std::size_t) noexcept override {
    if (pointer == nullptr) return;
    int previous = 0;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(device_);
    (void)cudaDeviceSynchronize();
    (void)cudaSetDevice(previous);
    (void)cudaFreeHost(pointer);
  }
  void copy(void* destination, const void* source, std::size_t bytes) override {
    if (bytes == 0) return;
    device_scope on(device_);
    BULKGNN_CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
  }
  memory_space space() const noexcept override { return memory_space::pinned_host; }

 private:
  int device_;  // whose kernels may read the memory
};

class cuda_context final : public device_context {
 public:
  explicit cuda_context(int device) : device_(device), pinned_memory_(device) {
    device_scope on(device);
    cudaDeviceProp properties{};
    BULKGNN_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    name_ = properties.name;
    BULKGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // Freed memory stays in the pool until the process ends, so allocations
    // after the first epoch's come from it.
    cudaMemPool_t pool = nullptr;
    BULKGNN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    BULKGNN_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    device_memory_ = std::make_unique<pooled_device_memory>(device, stream_);
  }
  ~cuda_context() override {
    (void)cudaStreamSynchronize(stream_);
    if (blas_ != nullptr) {
      // cublasDestroy synchronises the current device: make it this one.
      int previous = 0;
      (void)cudaGetDevice(&previous);
      (void)cudaSetDevice(device_);
      (void)cublas().destroy(blas_);
      (void)cudaSetDevice(previous);
    }
    (void)cudaStreamDestroy(stream_);
  }
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;

  blas_session blas() {
    std::unique_lock lock(blas_mutex_);
    if (blas_ == nullptr) {
      device_scope on(device_);
      cublasHandle_t handle = nullptr;
      BULKGNN_CUBLAS_CHECK(cublas().create(&handle));
      // Kept only once bound to the stream: a handle left on the legacy
      // default stream would run GEMMs unordered with the executor's work.
      try {
        BULKGNN_CUBLAS_CHECK(cublas().set_stream(handle, stream_));
        // Float32 arithmetic throughout: no TF32 tensor-core rounding of the
        // inputs, whatever NVIDIA_TF32_OVERRIDE says.
        BULKGNN_CUBLAS_CHECK(cublas().set_math_mode(handle, CUBLAS_PEDANTIC_MATH));
      } catch (...) {
        (void)cublas().destroy(handle);
        throw;
      }
      blas_ = handle;
    }
    return {std::move(lock), blas_};
  }

  int device() const override { return device_; }
  std::string_view device_name() const override { return name_; }
  void* stream() const override { return stream_; }
  memory_resource& device_memory() override { return *device_memory_; }
  memory_resource& pinned_memory() override { return pinned_memory_; }
  void synchronize() const override { BULKGNN_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::shared_ptr<void> mark() override {
    const device_scope on(device_);
    cudaEvent_t event = nullptr;
    BULKGNN_CUDA_CHECK(cudaEventCreate(&event));
    std::shared_ptr<void> owned(event,
                                [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
    BULKGNN_CUDA_CHECK(cudaEventRecord(event, stream_));
    return owned;
  }
  void wait_until(const std::shared_ptr<void>& mark) const override {
    BULKGNN_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(mark.get())));
  }
  double seconds_between(const std::shared_ptr<void>& begin,
                         const std::shared_ptr<void>& end) const override {
    const auto last = static_cast<cudaEvent_t>(end.get());
    BULKGNN_CUDA_CHECK(cudaEventSynchronize(last));
    float milliseconds = 0;
    BULKGNN_CUDA_CHECK(
        cudaEventElapsedTime(&milliseconds, static_cast<cudaEvent_t>(begin.get()), last));
    return milliseconds / 1e3;
  }

 private:
  int device_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<pooled_device_memory> device_memory_;
  pinned_host_memory pinned_memory_;
  std::mutex blas_mutex_;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace

blas_session blas_of(const executor& exec) {
  auto* context = dynamic_cast<cuda_context*>(exec.device());
  if (context == nullptr) throw_argument_error("cuBLAS: the executor has no CUDA device context");
  return context->blas();
}

current_device::current_device(const executor& exec) {
  const int device = exec.device()->device();
  BULKGNN_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == device) return;
  BULKGNN_CUDA_CHECK(cudaSetDevice(device));
  changed_ = true;
}

current_device::~current_device() {
  if (changed_) (void)cudaSetDevice(previous_);
}

std::shared_ptr<device_context> create_context(int device) {
  return std::make_shared<cuda_context>(device);
}

}  // namespace bulkgnn::kernels::cuda
