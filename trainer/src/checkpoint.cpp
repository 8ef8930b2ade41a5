#include "bulkgnn/trainer/checkpoint.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/input_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

namespace bulkgnn::trainer {
namespace {

// Layout: magic, u64 header length, header JSON, then three u64-counted
// float arrays (parameters, first and second moments), then the CRC-32 of
// every byte before it as a u32. Little-endian, as every machine we run on.
constexpr std::string_view magic = "bulkgnn-checkpoint-v1\n";

class byte_writer {
 public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    buffer_.append(p, n);
  }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void floats(const std::vector<float>& v) {
    u64(v.size());
    bytes(v.data(), v.size() * sizeof(float));
  }
  [[nodiscard]] std::string& buffer() { return buffer_; }

 private:
  std::string buffer_;
};

class byte_reader {
 public:
  byte_reader(std::string_view content, std::string file)
      : rest_(content), file_(std::move(file)) {}

  std::string_view take(std::size_t n, const char* what) {
    if (rest_.size() < n)
      throw data_error(file_, fmt::format("truncated checkpoint (while reading {})", what));
    const auto out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return out;
  }
  std::uint64_t u64(const char* what) {
    std::uint64_t v = 0;
    std::memcpy(&v, take(sizeof v, what).data(), sizeof v);
    return v;
  }
  std::vector<float> floats(const char* what) {
    const auto n = u64(what);
    if (n > rest_.size() / sizeof(float))
      throw data_error(file_, fmt::format("truncated checkpoint (while reading {})", what));
    std::vector<float> v(n);
    const auto bytes = take(n * sizeof(float), what);
    // An empty vector's data() may be null, which memcpy must never get.
    if (n != 0) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
  [[nodiscard]] bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
  std::string file_;
};

std::uint32_t crc32_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed the buffer in pieces below 4 GiB.
  constexpr std::size_t piece = 1u << 30;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const auto n = std::min(piece, bytes.size() - at);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace

std::filesystem::path checkpoint_path(const std::filesystem::path& dir) {
  return dir / "checkpoint.bin";
}

void save_checkpoint(const std::filesystem::path& dir, const checkpoint& c) {
  std::filesystem::create_directories(dir);
  const nlohmann::json header{{"fingerprint", c.fingerprint},
                              {"epochs_done", c.epochs_done},
                              {"optimizer_steps", c.optimizer_steps},
                              {"history", c.history}};
  const std::string header_text = header.dump();
  byte_writer w;
  w.bytes(magic.data(), magic.size());
  w.u64(header_text.size());
  w.bytes(header_text.data(), header_text.size());
  w.floats(c.parameters);
  w.floats(c.first_moment);
  w.floats(c.second_moment);
  const std::uint32_t crc = crc32_of(w.buffer());
  w.bytes(&crc, sizeof crc);

  atomic_output_file out(checkpoint_path(dir));
  out.stream().write(w.buffer().data(), static_cast<std::streamsize>(w.buffer().size()));
  out.commit();
}

namespace {

// A count the header must hold as a non-negative integer: a float there (say,
// an integer too large for int64) would make get<int64_t> undefined.
std::int64_t header_count(const nlohmann::json& header, const char* key, const std::string& file) {
  const auto& v = header.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    throw data_error(file,
                     fmt::format("checkpoint header's \"{}\" is not a non-negative integer", key));
  return v.get<std::int64_t>();
}

}  // namespace

std::optional<checkpoint> load_checkpoint(const std::filesystem::path& dir) {
  const auto path = checkpoint_path(dir);
  if (const auto reason = not_a_regular_file(path); !reason.empty())
    throw data_error(path.string(), reason);
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw data_error(path.string(), "cannot open checkpoint");
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string file = path.string();

  if (content.size() < magic.size() + sizeof(std::uint32_t) ||
      std::string_view(content).substr(0, magic.size()) != magic)
    throw data_error(file, "not a bulkgnn checkpoint (bad magic)");
  const auto body = std::string_view(content).substr(0, content.size() - sizeof(std::uint32_t));
  std::uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, content.data() + body.size(), sizeof stored_crc);
  if (crc32_of(body) != stored_crc)
    throw data_error(file, "checkpoint is corrupt (CRC-32 mismatch)");

  byte_reader r(body.substr(magic.size()), file);
  const auto header_size = r.u64("header length");
  const auto header_text = r.take(header_size, "header");
  checkpoint c;
  try {
    const auto header = nlohmann::json::parse(header_text);
    c.fingerprint = header.at("fingerprint");
    c.epochs_done = header_count(header, "epochs_done", file);
    c.optimizer_steps = header_count(header, "optimizer_steps", file);
    c.history = header.at("history");
  } catch (const nlohmann::json::exception& e) {
    throw data_error(file, fmt::format("malformed checkpoint header: {}", e.what()));
  }
  c.parameters = r.floats("parameters");
  c.first_moment = r.floats("first moments");
  c.second_moment = r.floats("second moments");
  if (!r.done()) throw data_error(file, "unexpected bytes after the optimizer state");
  if (c.first_moment.size() != c.parameters.size() || c.second_moment.size() != c.parameters.size())
    throw data_error(file, "optimizer state and parameters differ in size");
  return c;
}

void check_fingerprint(const nlohmann::json& saved, const nlohmann::json& current,
                       const std::filesystem::path& file) {
  for (const auto& [key, value] : current.items()) {
    if (!saved.contains(key))
      throw option_error(
          fmt::format("train_options.resume: {} has no setting '{}': it is from another run, "
                      "or from an earlier version without that setting (where the setting is "
                      "one recorded only away from its default, give it its default)",
                      file.string(), key));
    if (saved.at(key) != value)
      throw option_error(
          fmt::format("train_options.resume: {} was written with {} = {}, but this run has {} = {}",
                      file.string(), key, saved.at(key).dump(), key, value.dump()));
  }
  for (const auto& [key, value] : saved.items())
    if (!current.contains(key))
      throw option_error(
          fmt::format("train_options.resume: {} has setting '{}' that this run does not know",
                      file.string(), key));
}

}  // namespace bulkgnn::trainer
