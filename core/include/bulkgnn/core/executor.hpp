#pragma once

#include "bulkgnn/core/memory_space.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace bulkgnn {

// The kernel back ends. Every algorithm (sampler, loader, trainer) is written
// once against the kernel front doors (kernels/) and takes an executor; each
// back end implements the same narrow interface in its own folder
// (kernels/reference, kernels/cpu, kernels/cuda). The reference back end is
// deliberately naive and serial: the oracle the others are tested against.
enum class backend { reference, cpu, cuda };

[[nodiscard]] std::string_view backend_name(backend kind);
// The back end called `name`; option_error "<option> must be cpu, reference or
// cuda; got '<name>'" otherwise.
[[nodiscard]] backend parse_backend(std::string_view name, std::string_view option);

// What a device back end's executor runs with: its device, the stream its
// kernels and copies are queued on in order, and the resources its outputs
// and staging buffers come from. Buffers allocated from these resources must
// not outlive every executor that shares the context (the resources and the
// stream go with it). kernels/cuda implements it (make one with
// kernels::make_cuda_executor); core knows no CUDA type, so the stream is
// an opaque handle there.
class device_context {
 public:
  virtual ~device_context() = default;
  [[nodiscard]] virtual int device() const = 0;
  [[nodiscard]] virtual std::string_view device_name() const = 0;
  // The cudaStream_t every kernel and copy of this executor is queued on.
  [[nodiscard]] virtual void* stream() const = 0;
  // Device memory from a stream-ordered pool: freeing is queued on the
  // stream and the pool keeps the memory, so the hot path never calls
  // cudaMalloc.
  [[nodiscard]] virtual memory_resource& device_memory() = 0;
  // Page-locked host memory the device reads through UVA.
  [[nodiscard]] virtual memory_resource& pinned_memory() = 0;
  // Waits until everything queued on the stream has run.
  virtual void synchronize() const = 0;
  // The point the stream's queued work has reached (a CUDA event recorded
  // on it), to time stages as the device runs them rather than as the host
  // queues them.
  [[nodiscard]] virtual std::shared_ptr<void> mark() = 0;
  // Waits on the host until the stream has run everything queued before
  // `mark`, and no later work (which synchronize() would wait for too).
  virtual void wait_until(const std::shared_ptr<void>& mark) const = 0;
  // The device's seconds between two marks of this stream; waits for `end`.
  [[nodiscard]] virtual double seconds_between(const std::shared_ptr<void>& begin,
                                               const std::shared_ptr<void>& end) const = 0;
};

// Where kernels run and the state they run with: the back end, the threads a
// cpu executor may use, the memory resource that kernel outputs are
// allocated from, and a cuda executor's device context. Copies are cheap and
// share that state. The kernel front doors refuse arguments in a memory
// space the executor cannot reach.
class executor {
 public:
  // threads = 0: every core the process may use (within any thread_limit);
  // otherwise kernels run in a task arena of that many threads. Implicit, so
  // a back end alone names its default executor. A cuda executor needs its
  // device context (the constructor below).
  executor(backend kind = backend::cpu, int threads = 0);  // NOLINT(google-explicit-constructor)
  // A cuda executor on `device`'s device and stream.
  explicit executor(std::shared_ptr<device_context> device);

  [[nodiscard]] backend kind() const { return kind_; }
  [[nodiscard]] int threads() const { return threads_; }
  [[nodiscard]] memory_resource& memory() const { return *memory_; }
  // The device context of a cuda executor; nullptr for the host back ends.
  [[nodiscard]] device_context* device() const { return device_.get(); }
  // Memory its kernels may read and write: host and pinned host for the
  // reference and cpu back ends; device and pinned host (through UVA) for cuda.
  [[nodiscard]] bool can_access(memory_space space) const;
  // Waits until every kernel and copy queued so far has run: a cuda
  // executor's stream; nothing for the host back ends, whose kernels return
  // done. Callers need no branch on the back end.
  void synchronize() const;
  // What runs the kernels: the GPU's name, or "cpu" for the host back ends.
  [[nodiscard]] std::string device_name() const;

  // Runs f() with this executor's threads and returns what it returns.
  template <class F>
  decltype(auto) run(F&& f) const {
    using result = std::invoke_result_t<F&>;
    if (!arena_) return std::forward<F>(f)();
    if constexpr (std::is_void_v<result>) {
      run_in_arena([&] { f(); });
    } else {
      std::optional<result> out;
      run_in_arena([&] { out.emplace(f()); });
      return result(std::move(*out));
    }
  }

 private:
  struct thread_arena;
  void run_in_arena(const std::function<void()>& f) const;

  backend kind_;
  int threads_;
  std::shared_ptr<thread_arena> arena_;
  std::shared_ptr<device_context> device_;
  memory_resource* memory_;
};

}  // namespace bulkgnn
