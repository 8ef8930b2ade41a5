#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace bulkgnn::comm {

// The element types a reduction understands; every other collective moves
// any trivially copyable type as opaque elements of its size.
enum class datatype { i8, u8, i32, u32, i64, u64, f32, f64 };

enum class reduce_op { sum, max, min };

template <class T>
inline constexpr bool is_reducible_v =
    std::is_same_v<T, char> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
constexpr datatype datatype_of() {
  static_assert(is_reducible_v<T>, "no reducible datatype for this element type");
  if constexpr (std::is_same_v<T, char> || std::is_same_v<T, std::int8_t>)
    return datatype::i8;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return datatype::u8;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return datatype::i32;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return datatype::u32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return datatype::i64;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return datatype::u64;
  else if constexpr (std::is_same_v<T, float>)
    return datatype::f32;
  else
    return datatype::f64;
}

// What a codec learns about a payload's elements: their size, and their
// arithmetic type where they have one (a float codec can quantise floats).
struct element_info {
  std::size_t bytes = 1;
  std::optional<datatype> type;
};

template <class T>
constexpr element_info element_info_of() {
  if constexpr (is_reducible_v<T>)
    return {sizeof(T), datatype_of<T>()};
  else
    return {sizeof(T), std::nullopt};
}

}  // namespace bulkgnn::comm
