#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace bulkgnn::python {

// An array that C++ owns, in host memory or on a GPU (`device`: kDLCUDA
// and its id), handed to Python without a copy through the DLPack protocol
// (DLPack 0.6, Debian's libdlpack-dev): torch.from_dlpack(a) views its
// memory (np.from_dlpack(a) a host array's). `owner` keeps that memory alive and
// holds no Python object, so the tensor a consumer builds may be freed on any
// thread, with or without the GIL: the last one to go drops `owner` (for a
// minibatch, that returns its feature buffer to the loader's pool).
class dlpack_array {
 public:
  template <class T>
  dlpack_array(std::shared_ptr<const void> owner, std::span<const T> data,
               std::vector<std::int64_t> shape, DLDevice device = {kDLCPU, 0})
      : owner_(std::move(owner)),
        data_(data.data()),
        type_(dtype_of<T>()),
        shape_(std::move(shape)),
        device_(device) {}

  // A new DLPack capsule ("dltensor") over the array; each holds its own
  // reference to the owner.
  [[nodiscard]] pybind11::capsule to_dlpack() const;
  [[nodiscard]] const std::vector<std::int64_t>& shape() const { return shape_; }
  [[nodiscard]] std::uintptr_t data_pointer() const;
  // numpy's name of the element type: "float32", "int32" or "int64".
  [[nodiscard]] const char* dtype_name() const;
  [[nodiscard]] DLDevice device() const { return device_; }

 private:
  template <class T>
  static DLDataType dtype_of() {
    static_assert(sizeof(T) * 8 <= 255);
    constexpr auto code = std::is_floating_point_v<T> ? kDLFloat : kDLInt;
    return {static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(sizeof(T) * 8), 1};
  }

  std::shared_ptr<const void> owner_;
  const void* data_;
  DLDataType type_;
  std::vector<std::int64_t> shape_;
  DLDevice device_;
};

void bind_dlpack_array(pybind11::module_& m);

}  // namespace bulkgnn::python
