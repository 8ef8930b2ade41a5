#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace bulkgnn::python {

// The library names the fields of its option structs in its errors
// (loader_options.batch_size); Python users know the keyword arguments
// (batch_size), so messages are rewritten in their terms.
[[nodiscard]] std::string in_keyword_terms(std::string message);

// bulkgnn::option_error becomes ValueError; every other bulkgnn::error the
// module's Error (a RuntimeError), with the C++ message in keyword terms.
void register_errors(pybind11::module_& m);

}  // namespace bulkgnn::python
