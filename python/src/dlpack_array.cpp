#include "dlpack_array.hpp"

#include <pybind11/stl.h>

#include <numeric>

namespace py = pybind11;

namespace bulkgnn::python {

namespace {

// What a capsule hands its consumer: the tensor description, the storage its
// shape and strides point into, and a reference to the array's owner.
struct managed_array {
  DLManagedTensor tensor{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::shared_ptr<const void> owner;
};

void delete_managed_array(DLManagedTensor* tensor) {
  delete static_cast<managed_array*>(tensor->manager_ctx);
}

constexpr const char* unused_capsule_name = "dltensor";
constexpr const char* used_capsule_name = "used_dltensor";

// A capsule no consumer took still owns its tensor. A consumer renames the
// capsule to "used_dltensor" and calls the deleter itself, later.
void release_unused_capsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, used_capsule_name)) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (auto* tensor =
          static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, unused_capsule_name)))
    tensor->deleter(tensor);
  else
    PyErr_WriteUnraisable(capsule);
  PyErr_Restore(type, value, traceback);
}

// Consumers read the address even of an empty array; an empty buffer has none.
alignas(64) constexpr std::byte empty_storage[64] = {};

}  // namespace

py::capsule dlpack_array::to_dlpack() const {
  auto managed = std::make_unique<managed_array>();
  managed->shape = shape_;
  managed->strides.resize(shape_.size());
  std::int64_t stride = 1;
  for (std::size_t d = shape_.size(); d-- > 0;) {
    managed->strides[d] = stride;
    stride *= shape_[d];
  }
  managed->owner = owner_;
  auto& t = managed->tensor.dl_tensor;
  const bool host = device_.device_type != kDLCUDA;
  t.data = const_cast<void*>(data_ != nullptr || !host ? data_ : empty_storage);
  t.device = device_;
  t.ndim = static_cast<std::int32_t>(shape_.size());
  t.dtype = type_;
  t.shape = managed->shape.data();
  t.strides = managed->strides.data();
  t.byte_offset = 0;
  managed->tensor.manager_ctx = managed.get();
  managed->tensor.deleter = delete_managed_array;
  PyObject* capsule = PyCapsule_New(&managed->tensor, unused_capsule_name, release_unused_capsule);
  if (capsule == nullptr) throw py::error_already_set();
  managed.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

std::uintptr_t dlpack_array::data_pointer() const {
  return reinterpret_cast<std::uintptr_t>(data_ != nullptr ? data_ : empty_storage);
}

const char* dlpack_array::dtype_name() const {
  if (type_.code == kDLFloat) return "float32";
  return type_.bits == 64 ? "int64" : "int32";
}

namespace {

bool on_gpu(const dlpack_array& a) { return a.device().device_type == kDLCUDA; }

// numpy reads host memory only.
py::object numpy_view(const py::object& self) {
  if (on_gpu(self.cast<const dlpack_array&>()))
    throw py::value_error(
        "bulkgnn.Array: this array is in GPU memory, which numpy cannot read; use "
        "torch.from_dlpack(a) (or a.torch().cpu())");
  return py::module_::import("numpy").attr("from_dlpack")(self);
}

}  // namespace

void bind_dlpack_array(py::module_& m) {
  py::class_<dlpack_array>(m, "Array",
                           "An array owned by bulkgnn, in host or (a loader on a GPU) device "
                           "memory, viewed without a copy through DLPack: torch.from_dlpack(a), "
                           "np.from_dlpack(a) for a host array.")
      .def(
          "__dlpack__",
          [](const dlpack_array& a, const py::object& stream) {
            // A GPU array is complete when the loader hands it out (its stream
            // has finished), so any consumer stream may read it.
            if (!stream.is_none() && !on_gpu(a))
              throw py::value_error("Array.__dlpack__: stream must be None for a host array");
            return a.to_dlpack();
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const dlpack_array& a) {
             return py::make_tuple(static_cast<int>(a.device().device_type), a.device().device_id);
           })
      .def_property_readonly("shape",
                             [](const dlpack_array& a) { return py::tuple(py::cast(a.shape())); })
      .def_property_readonly("dtype", &dlpack_array::dtype_name)
      .def_property_readonly("data_ptr", &dlpack_array::data_pointer,
                             "Address of the first element (the loader's buffer, not a copy).")
      .def("__len__", [](const dlpack_array& a) { return a.shape().empty() ? 0 : a.shape()[0]; })
      .def("numpy", &numpy_view, "np.from_dlpack(self): a numpy view, no copy (host arrays).")
      .def(
          "torch",
          [](const py::object& self) {
            return py::module_::import("torch").attr("from_dlpack")(self);
          },
          "torch.from_dlpack(self): a torch view, no copy.")
      .def(
          "__array__",
          [](const py::object& self, const py::object& dtype) {
            py::object view = numpy_view(self);
            return dtype.is_none() ? view : view.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none())
      .def("__repr__", [](const dlpack_array& a) {
        return py::str("bulkgnn.Array(shape={}, dtype={})")
            .format(py::tuple(py::cast(a.shape())), a.dtype_name());
      });
}

}  // namespace bulkgnn::python
