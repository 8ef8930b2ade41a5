#pragma once

#include <pybind11/pybind11.h>

namespace bulkgnn::python {

// One per module of the library that Python sees (its classes and functions).
void bind_dataset(pybind11::module_& m);
void bind_loader(pybind11::module_& m);

}  // namespace bulkgnn::python
