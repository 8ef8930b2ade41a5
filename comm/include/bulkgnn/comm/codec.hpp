#pragma once

#include "bulkgnn/comm/datatype.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace bulkgnn::comm {

// Turns one payload into what crosses the network and back: where
// compression of features, activations and their gradients goes (fixed or
// variable rate). The collectives that take a codec encode every message
// they send, decode every message they receive, and count encoded bytes in
// the traffic log. A codec is called from the calling thread only and may
// keep state (a rate schedule), but must decode what any rank encoded.
class codec {
 public:
  virtual ~codec() = default;
  // True only for the identity, which the collectives skip (no copies).
  [[nodiscard]] virtual bool is_identity() const { return false; }
  [[nodiscard]] virtual std::vector<std::byte> encode(std::span<const std::byte> raw,
                                                      element_info elements) const = 0;
  // The raw bytes of an encoded payload; the caller checks their length.
  [[nodiscard]] virtual std::vector<std::byte> decode(std::span<const std::byte> encoded,
                                                      element_info elements) const = 0;
};

// Sends payloads as they are.
class identity_codec final : public codec {
 public:
  [[nodiscard]] bool is_identity() const override { return true; }
  [[nodiscard]] std::vector<std::byte> encode(std::span<const std::byte> raw,
                                              element_info elements) const override;
  [[nodiscard]] std::vector<std::byte> decode(std::span<const std::byte> encoded,
                                              element_info elements) const override;
};

// The default codec of every collective that takes one.
[[nodiscard]] const codec& identity();

}  // namespace bulkgnn::comm
