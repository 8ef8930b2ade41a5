#include "bulkgnn/fullbatch/compression.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace bulkgnn::fullbatch {

namespace {

int bits_of_rate(int rate) {
  BULKGNN_EXPECTS(rate >= 2 && rate <= 32 && std::has_single_bit(static_cast<unsigned>(rate)),
                  "compression rate {}: must be 2, 4, 8, 16 or 32", rate);
  return 32 / rate;
}

// Parses a whole decimal integer or throws naming --compress.
std::int64_t whole_number(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw option_error(fmt::format("--compress {}: '{}' is not a whole number", option, text));
  return value;
}

}  // namespace

quantising_codec::quantising_codec(int rate, std::int64_t cols)
    : bits_(bits_of_rate(rate)), cols_(cols) {
  BULKGNN_EXPECTS(cols >= 1, "quantising_codec: rows of {} columns", cols);
}

std::int64_t quantising_codec::row_bytes() const {
  return 2 * static_cast<std::int64_t>(sizeof(float)) + (cols_ * bits_ + 7) / 8;
}

std::vector<std::byte> quantising_codec::encode(std::span<const std::byte> raw,
                                                comm::element_info elements) const {
  const auto row_floats = static_cast<std::size_t>(cols_);
  BULKGNN_EXPECTS(elements.bytes == sizeof(float) && raw.size() % (row_floats * sizeof(float)) == 0,
                  "quantising_codec: {} bytes of {}-byte elements are not rows of {} floats",
                  raw.size(), elements.bytes, cols_);
  const auto rows = raw.size() / (row_floats * sizeof(float));
  const std::uint32_t top = (1u << bits_) - 1u;  // bits_ <= 16
  std::vector<std::byte> encoded(rows * static_cast<std::size_t>(row_bytes()));
  std::vector<float> row(row_floats);
  auto* out = encoded.data();
  for (std::size_t r = 0; r < rows; ++r) {
    std::memcpy(row.data(), raw.data() + r * row_floats * sizeof(float),
                row_floats * sizeof(float));
    const auto [low, high] = std::minmax_element(row.begin(), row.end());
    if (!std::isfinite(*low) || !std::isfinite(*high) ||
        std::any_of(row.begin(), row.end(), [](float x) { return std::isnan(x); }))
      throw error(
          fmt::format("compression: row {} of a message holds a value that is not finite", r));
    const float minimum = *low;
    // In double: the range of two finite floats may overflow a float.
    const auto step = static_cast<float>((static_cast<double>(*high) - static_cast<double>(*low)) /
                                         static_cast<double>(top));
    if (!std::isfinite(step))
      throw error(
          fmt::format("compression: row {} of a message spans [{}, {}], too wide to "
                      "quantise",
                      r, *low, *high));
    std::memcpy(out, &minimum, sizeof(float));
    std::memcpy(out + sizeof(float), &step, sizeof(float));
    auto* codes = reinterpret_cast<unsigned char*>(out + 2 * sizeof(float));
    std::fill(codes, codes + (cols_ * bits_ + 7) / 8, 0);
    for (std::size_t c = 0; c < row_floats; ++c) {
      const auto code =
          step > 0 ? std::min<std::uint32_t>(
                         top, static_cast<std::uint32_t>(std::lround((row[c] - minimum) / step)))
                   : 0u;
      const auto bit = c * static_cast<std::size_t>(bits_);
      for (int b = 0; b < bits_; ++b)
        if ((code >> b) & 1u)
          codes[(bit + b) / 8] |= static_cast<unsigned char>(1u << ((bit + b) % 8));
    }
    out += row_bytes();
  }
  return encoded;
}

std::vector<std::byte> quantising_codec::decode(std::span<const std::byte> encoded,
                                                comm::element_info) const {
  const auto row_size = static_cast<std::size_t>(row_bytes());
  if (encoded.size() % row_size != 0)
    throw error(fmt::format("compression: a message of {} bytes is not rows of {} encoded bytes",
                            encoded.size(), row_size));
  const auto rows = encoded.size() / row_size;
  const auto row_floats = static_cast<std::size_t>(cols_);
  std::vector<std::byte> raw(rows * row_floats * sizeof(float));
  auto* out = reinterpret_cast<float*>(raw.data());
  for (std::size_t r = 0; r < rows; ++r) {
    const auto* in = encoded.data() + r * row_size;
    float minimum = 0, step = 0;
    std::memcpy(&minimum, in, sizeof(float));
    std::memcpy(&step, in + sizeof(float), sizeof(float));
    const auto* codes = reinterpret_cast<const unsigned char*>(in + 2 * sizeof(float));
    for (std::size_t c = 0; c < row_floats; ++c) {
      const auto bit = c * static_cast<std::size_t>(bits_);
      std::uint32_t code = 0;
      for (int b = 0; b < bits_; ++b)
        code |= static_cast<std::uint32_t>((codes[(bit + b) / 8] >> ((bit + b) % 8)) & 1u) << b;
      out[r * row_floats + c] = minimum + static_cast<float>(code) * step;
    }
  }
  return raw;
}

compression_schedule::compression_schedule(const std::string& text) : text_(text) {
  if (text == "none") return;
  const auto first = text.find(':');
  const auto kind = text.substr(0, first);
  BULKGNN_EXPECTS(first != std::string::npos && (kind == "fixed" || kind == "variable"),
                  "--compress {}: give none, fixed:RATE or variable:RATE:EPOCH", text);
  const auto second = text.find(':', first + 1);
  BULKGNN_EXPECTS((kind == "fixed") == (second == std::string::npos),
                  "--compress {}: give none, fixed:RATE or variable:RATE:EPOCH", text);
  const auto rate = whole_number(text.substr(first + 1, second - first - 1), text);
  BULKGNN_EXPECTS(rate >= 1 && rate <= 32 && std::has_single_bit(static_cast<std::uint64_t>(rate)),
                  "--compress {}: the rate must be 1, 2, 4, 8, 16 or 32", text);
  start_rate_ = static_cast<int>(rate);
  if (kind == "variable") {
    full_precision_epoch_ = whole_number(text.substr(second + 1), text);
    BULKGNN_EXPECTS(full_precision_epoch_ >= 1,
                    "--compress {}: the epoch of full precision must be at least 1", text);
  }
}

// variable:R:E spends E/(log2 R + 1) epochs at each of R, R/2, ..., 1.
int compression_schedule::rate_at(std::int64_t epoch) const {
  if (full_precision_epoch_ == 0 || start_rate_ == 1) return start_rate_;
  if (epoch >= full_precision_epoch_) return 1;
  const int levels = std::countr_zero(static_cast<unsigned>(start_rate_)) + 1;
  const auto level = static_cast<int>(epoch * levels / full_precision_epoch_);
  return std::max(1, start_rate_ >> level);
}

}  // namespace bulkgnn::fullbatch
