#include "bulkgnn/comm/codec.hpp"

namespace bulkgnn::comm {

std::vector<std::byte> identity_codec::encode(std::span<const std::byte> raw, element_info) const {
  return {raw.begin(), raw.end()};
}

std::vector<std::byte> identity_codec::decode(std::span<const std::byte> encoded,
                                              element_info) const {
  return {encoded.begin(), encoded.end()};
}

const codec& identity() {
  static const identity_codec instance;
  return instance;
}

}  // namespace bulkgnn::comm
