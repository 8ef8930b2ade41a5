#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::data {

// Element types stored in .npy files (little-endian): '<i4', '<i8', '<f4'.
enum class dtype { int32, int64, float32 };

[[nodiscard]] std::size_t dtype_size(dtype t);

// The dict of a .npy header as numpy writes it: the element type's descr
// ('<i8', '<f2', ...), whether the array is in Fortran order, the shape.
struct npy_header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};
// Throws data_error naming `path` if `dict` is not such a dict.
[[nodiscard]] npy_header parse_npy_header(std::string_view dict, const std::string& path);

template <class T>
constexpr dtype dtype_of();
template <>
constexpr dtype dtype_of<std::int32_t>() {
  return dtype::int32;
}
template <>
constexpr dtype dtype_of<std::int64_t>() {
  return dtype::int64;
}
template <>
constexpr dtype dtype_of<float>() {
  return dtype::float32;
}

// A whole file mapped into memory (read-only or read-write), unmapped on
// destruction. Move-only.
class mapped_file {
 public:
  mapped_file() = default;
  // With `prefault`, every page is mapped at open (one sequential pass) rather
  // than on first touch: worth it for arrays read at random, such as a graph's
  // topology, where a page fault per first touch would dominate sampling.
  static mapped_file open_read(const std::filesystem::path& path, bool prefault = false);
  // Creates (or truncates) `path` with `bytes` bytes and maps it writable.
  static mapped_file create(const std::filesystem::path& path, std::size_t bytes);
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  ~mapped_file();

  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  // Flushes a writable mapping to disk; throws data_error on failure.
  void sync() const;

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

// A memory-mapped C-order .npy array of one element type.
class npy_array {
 public:
  npy_array() = default;
  // Maps an existing file; throws data_error naming the file if it is not a
  // C-order .npy of a supported dtype or is shorter than its header says.
  static npy_array open(const std::filesystem::path& path, bool prefault = false);
  // Creates a zero-filled writable array with this dtype and shape.
  static npy_array create(const std::filesystem::path& path, dtype type,
                          std::vector<std::int64_t> shape);

  [[nodiscard]] dtype type() const { return type_; }
  [[nodiscard]] const std::vector<std::int64_t>& shape() const { return shape_; }
  [[nodiscard]] std::int64_t elements() const;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // Typed access; throws data_error naming the file if T is not its dtype.
  template <class T>
  [[nodiscard]] std::span<T> as() const {
    check_type(dtype_of<std::remove_const_t<T>>());
    return {reinterpret_cast<T*>(file_.data() + header_bytes_),
            static_cast<std::size_t>(elements())};
  }
  void sync() const { file_.sync(); }

 private:
  void check_type(dtype wanted) const;

  mapped_file file_;
  std::filesystem::path path_;
  dtype type_ = dtype::int32;
  std::vector<std::int64_t> shape_;
  std::size_t header_bytes_ = 0;
};

}  // namespace bulkgnn::data
