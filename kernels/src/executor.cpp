#include "bulkgnn/kernels/executor.hpp"

namespace bulkgnn::kernels {

std::string_view backend_name(backend b) {
  switch (b) {
    case backend::reference:
      return "reference";
    case backend::cpu:
      return "cpu";
    case backend::cuda:
      return "cuda";
  }
  return "unknown";
}

}  // namespace bulkgnn::kernels
