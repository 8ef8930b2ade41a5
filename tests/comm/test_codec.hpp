#pragma once

#include "bulkgnn/comm/codec.hpp"
#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <span>
#include <vector>

namespace bulkgnn::comm::testing {

// A codec whose wire form differs from the payload and is 4 bytes longer:
// a marker, then every byte flipped. Decoding anything it did not encode
// fails, and it counts its calls, so a test sees that the hook ran.
class marking_codec final : public codec {
 public:
  static constexpr std::size_t overhead = 4;

  std::vector<std::byte> encode(std::span<const std::byte> raw,
                                element_info elements) const override {
    ++encoded;
    last_element_bytes = elements.bytes;
    std::vector<std::byte> wire(marker.begin(), marker.end());
    for (const auto b : raw) wire.push_back(~b);
    return wire;
  }

  std::vector<std::byte> decode(std::span<const std::byte> wire, element_info) const override {
    ++decoded;
    if (wire.size() < overhead || !std::equal(marker.begin(), marker.end(), wire.begin()))
      throw error("marking_codec: not a payload this codec encoded");
    std::vector<std::byte> raw;
    for (const auto b : wire.subspan(overhead)) raw.push_back(~b);
    return raw;
  }

  mutable std::atomic<int> encoded = 0;
  mutable std::atomic<int> decoded = 0;
  mutable std::atomic<std::size_t> last_element_bytes = 0;

 private:
  static constexpr std::array<std::byte, overhead> marker{std::byte{'B'}, std::byte{'G'},
                                                          std::byte{'N'}, std::byte{'C'}};
};

}  // namespace bulkgnn::comm::testing
