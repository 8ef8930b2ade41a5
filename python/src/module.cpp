#include "bindings.hpp"
#include "dlpack_array.hpp"
#include "errors.hpp"

PYBIND11_MODULE(_bulkgnn, m) {
  m.doc() = "bulkgnn's C++ core: datasets, the multistage loader, DLPack arrays.";
  bulkgnn::python::register_errors(m);
  bulkgnn::python::bind_dlpack_array(m);
  bulkgnn::python::bind_dataset(m);
  bulkgnn::python::bind_loader(m);
}
