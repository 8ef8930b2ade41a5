#pragma once

#include <string_view>

namespace bulkgnn::kernels {

// Where a kernel runs. Every algorithm (sampler, loader, trainer) is written
// once against the kernel front doors and takes an executor; each back end
// implements the same narrow interface in its own folder (reference/, cpu/,
// cuda/). The reference back end is deliberately naive and serial: it is the
// oracle the other back ends are tested against.
enum class backend { reference, cpu, cuda };

struct executor {
  backend kind = backend::cpu;
};

[[nodiscard]] std::string_view backend_name(backend b);

}  // namespace bulkgnn::kernels
