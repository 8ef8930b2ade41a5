#pragma once

#include "bulkgnn/comm/codec.hpp"

#include <cstdint>
#include <string>

namespace bulkgnn::fullbatch {

// What crosses ranks in full-batch training (activation rows forward, their
// gradients backward), compressed by per-row uniform quantisation: a row of
// `cols` floats travels as its minimum and step (two floats) and one b-bit
// code per entry, code = round((x − min)/step), step = (max − min)/(2^b − 1).
// The rate R = 32/b (2, 4, 8, 16 or 32: 16, 8, 4, 2 or 1 bits); the 8 bytes
// per row make the bytes sent a little more than 1/R of the floats'.
//
// Why this member of VARCO's family of compression operators: it is
// deterministic (every rank decodes what any rank encoded with no shared
// random state, and the same seed gives the same model), its error per entry
// is bounded by step/2, so it vanishes as b grows, and the rate maps to a
// bit width, so a schedule moves through rates by changing one number.
class quantising_codec final : public comm::codec {
 public:
  // rate in {2, 4, 8, 16, 32}; rows of `cols` floats.
  quantising_codec(int rate, std::int64_t cols);

  [[nodiscard]] std::vector<std::byte> encode(std::span<const std::byte> raw,
                                              comm::element_info elements) const override;
  [[nodiscard]] std::vector<std::byte> decode(std::span<const std::byte> encoded,
                                              comm::element_info elements) const override;
  // Bytes of one encoded row.
  [[nodiscard]] std::int64_t row_bytes() const;

 private:
  int bits_;
  std::int64_t cols_;
};

// The rate of each epoch: none (1 throughout), fixed:R, or variable:R:E,
// which starts at R and steps down through R, R/2, ..., 1, spending about
// E/(log2 R + 1) epochs at each, so that it is 1 (full precision) from epoch E
// on (epochs counted from 0); with E < log2 R + 1 some rates are skipped.
class compression_schedule {
 public:
  compression_schedule() = default;
  // "none", "fixed:R" or "variable:R:E"; an option_error naming --compress
  // otherwise (R a power of two in [1, 32], E >= 1).
  explicit compression_schedule(const std::string& text);

  [[nodiscard]] int rate_at(std::int64_t epoch) const;
  [[nodiscard]] bool compresses() const { return start_rate_ > 1; }
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_ = "none";
  int start_rate_ = 1;
  std::int64_t full_precision_epoch_ = 0;  // 0: a fixed rate
};

}  // namespace bulkgnn::fullbatch
