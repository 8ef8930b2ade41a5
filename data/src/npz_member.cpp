#include "npz_member.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/input_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace bulkgnn::data {

namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t end_of_directory_signature = 0x06054b50;
constexpr std::uint32_t zip64_locator_signature = 0x07064b50;
constexpr std::uint32_t zip64_end_signature = 0x06064b50;
constexpr std::uint32_t directory_entry_signature = 0x02014b50;
constexpr std::uint32_t local_header_signature = 0x04034b50;
constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

std::uint64_t little(const std::byte* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::to_integer<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::vector<std::byte> read_at(std::ifstream& file, std::uint64_t offset, std::size_t bytes,
                               const std::string& path) {
  std::vector<std::byte> out(bytes);
  file.clear();
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(bytes));
  if (!file || static_cast<std::size_t>(file.gcount()) != bytes)
    throw data_error(
        path, fmt::format("not a zip archive: cannot read {} bytes at offset {}", bytes, offset));
  return out;
}

struct central_directory {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The end-of-central-directory record (and its zip64 twin when the archive
// needs one) says where the directory is.
central_directory find_directory(std::ifstream& file, std::uint64_t file_size,
                                 const std::string& path) {
  const std::uint64_t tail = std::min<std::uint64_t>(file_size, 22 + 65535);
  if (tail < 22) throw data_error(path, "not a zip archive: too short");
  const auto bytes = read_at(file, file_size - tail, tail, path);
  for (std::size_t at = tail - 22 + 1; at-- > 0;) {
    if (little(bytes.data() + at, 4) != end_of_directory_signature) continue;
    central_directory dir{little(bytes.data() + at + 16, 4), little(bytes.data() + at + 12, 4)};
    const std::uint64_t end = file_size - tail + at;
    const bool needs_zip64 = dir.offset == 0xFFFFFFFF || dir.size == 0xFFFFFFFF ||
                             little(bytes.data() + at + 10, 2) == 0xFFFF;
    if (end >= 20) {
      const auto locator = read_at(file, end - 20, 20, path);
      if (little(locator.data(), 4) == zip64_locator_signature) {
        const auto record = read_at(file, little(locator.data() + 8, 8), 56, path);
        if (little(record.data(), 4) != zip64_end_signature)
          throw data_error(path, "malformed zip archive: bad zip64 end-of-directory record");
        dir = {little(record.data() + 48, 8), little(record.data() + 40, 8)};
      } else if (needs_zip64) {
        throw data_error(path, "malformed zip archive: zip64 sizes without a zip64 locator");
      }
    }
    if (dir.size > file_size || dir.offset > file_size - dir.size)
      throw data_error(path, "malformed zip archive: the central directory lies past the end");
    return dir;
  }
  throw data_error(path, "not a zip archive: no end-of-central-directory record");
}

// The directory entry of `member`, with zip64 sizes and offset resolved, or
// nothing if the archive has no such member.
std::optional<npz_member::location> find_member(std::ifstream& file, const std::string& path,
                                                const std::string& member) {
  file.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::uint64_t>(file.tellg());
  const auto dir = find_directory(file, file_size, path);
  const auto bytes = read_at(file, dir.offset, static_cast<std::size_t>(dir.size), path);
  for (std::size_t at = 0; at + 46 <= bytes.size();) {
    const std::byte* e = bytes.data() + at;
    if (little(e, 4) != directory_entry_signature)
      throw data_error(path, "malformed zip archive: bad central directory entry");
    const auto name_length = static_cast<std::size_t>(little(e + 28, 2));
    const auto extra_length = static_cast<std::size_t>(little(e + 30, 2));
    const auto comment_length = static_cast<std::size_t>(little(e + 32, 2));
    if (at + 46 + name_length + extra_length > bytes.size())
      throw data_error(path, "malformed zip archive: truncated central directory entry");
    const std::string name(reinterpret_cast<const char*>(e + 46), name_length);
    at += 46 + name_length + extra_length + comment_length;
    if (name != member) continue;
    if ((little(e + 8, 2) & 1) != 0) throw data_error(path, fmt::format("{} is encrypted", member));
    npz_member::location loc{static_cast<std::uint16_t>(little(e + 10, 2)), little(e + 20, 4),
                             little(e + 24, 4), little(e + 42, 4)};
    // The zip64 extra field holds, in this order, whichever of the three
    // values the entry marks 0xFFFFFFFF.
    const std::byte* extra = e + 46 + name_length;
    for (std::size_t x = 0; x + 4 <= extra_length;) {
      const auto id = little(extra + x, 2);
      const auto size = static_cast<std::size_t>(little(extra + x + 2, 2));
      if (x + 4 + size > extra_length)
        throw data_error(path, "malformed zip archive: truncated extra field");
      if (id == 1) {
        std::size_t field = x + 4;
        for (std::uint64_t* value : {&loc.uncompressed, &loc.compressed, &loc.data_offset}) {
          if (*value != 0xFFFFFFFF) continue;
          if (field + 8 > x + 4 + size)
            throw data_error(path, "malformed zip archive: short zip64 extra field");
          *value = little(extra + field, 8);
          field += 8;
        }
      }
      x += 4 + size;
    }
    const auto local = read_at(file, loc.data_offset, 30, path);
    if (little(local.data(), 4) != local_header_signature)
      throw data_error(path, fmt::format("malformed zip archive: bad local header of {}", member));
    loc.data_offset += 30 + little(local.data() + 26, 2) + little(local.data() + 28, 2);
    if (loc.method != 0 && loc.method != 8)
      throw data_error(path, fmt::format("{} uses zip compression method {}; only stored (0) and "
                                         "deflated (8) members are read",
                                         member, loc.method));
    if (loc.method == 0 && loc.compressed != loc.uncompressed)
      throw data_error(path, fmt::format("{} is stored with {} bytes but says {} uncompressed",
                                         member, loc.compressed, loc.uncompressed));
    if (loc.compressed > file_size || loc.data_offset > file_size - loc.compressed)
      throw data_error(path, fmt::format("{} is truncated", member));
    return loc;
  }
  return std::nullopt;
}

std::ifstream open_archive(const fs::path& archive) {
  if (const auto reason = not_a_regular_file(archive); !reason.empty())
    throw data_error(archive.string(), reason);
  std::ifstream file(archive, std::ios::binary);
  if (!file) throw data_error(archive.string(), "cannot open");
  return file;
}

// Byte order, kind and size of a descr such as '<i8', '|u1' or '<f2'.
struct element_type {
  char kind = 0;
  std::size_t size = 0;
};

element_type element_of(const std::string& descr, const std::string& where) {
  const bool little_endian_or_single_byte =
      descr.size() >= 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=');
  std::size_t size = 0;
  if (little_endian_or_single_byte)
    for (std::size_t i = 2; i < descr.size() && std::isdigit(static_cast<unsigned char>(descr[i]));
         ++i)
      size = size * 10 + static_cast<std::size_t>(descr[i] - '0');
  if (!little_endian_or_single_byte || size == 0 || size > 8 ||
      std::string("iubf").find(descr[1]) == std::string::npos)
    throw data_error(where, fmt::format("unsupported dtype '{}' (expected a little-endian "
                                        "integer, bool or float)",
                                        descr));
  return {descr[1], size};
}

float half_to_float(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  float value = 0;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa != 0 ? std::numeric_limits<float>::quiet_NaN()
                          : std::numeric_limits<float>::infinity();
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) != 0 ? -value : value;
}

// Element i of `raw` (elements of type `t`) as int64, or nothing if it does
// not fit (an unsigned 8-byte value above 2^63 - 1).
std::optional<std::int64_t> integer_at(const std::byte* raw, element_type t) {
  const std::uint64_t bits = little(raw, t.size);
  if (t.kind == 'u' || t.kind == 'b') {
    if (bits > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return static_cast<std::int64_t>(bits);
  }
  // Sign-extend a t.size-byte two's complement value.
  const unsigned shift = static_cast<unsigned>(64 - 8 * t.size);
  return static_cast<std::int64_t>(bits << shift) >> shift;
}

}  // namespace

struct npz_reader::inflater {
  z_stream z{};
  std::vector<std::byte> input = std::vector<std::byte>(chunk_bytes);
  explicit inflater(const std::string& where) {
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
      throw data_error(where, "zlib cannot start inflating (inflateInit2 failed)");
  }
  ~inflater() { inflateEnd(&z); }
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;
};

npz_member::npz_member(fs::path archive, const std::string& name)
    : archive_(std::move(archive)), where_(archive_.string() + ": " + name + ".npy") {
  auto file = open_archive(archive_);
  const auto found = find_member(file, archive_.string(), name + ".npy");
  if (!found) throw data_error(archive_.string(), fmt::format("missing: no member {}.npy", name));
  at_ = *found;
  npz_reader in(archive_, at_, where_);
  std::array<std::byte, 10> prefix{};
  in.read(prefix);
  static constexpr char magic[] = "\x93NUMPY";
  if (std::memcmp(prefix.data(), magic, 6) != 0)
    throw data_error(where_, "not a .npy member (bad magic)");
  const auto major = std::to_integer<int>(prefix[6]);
  if (major < 1 || major > 3)
    throw data_error(where_, fmt::format("unsupported .npy version {}", major));
  std::uint64_t length = little(prefix.data() + 8, 2);
  header_bytes_ = 10;
  if (major >= 2) {
    std::array<std::byte, 2> high{};
    in.read(high);
    length |= little(high.data(), 2) << 16;
    header_bytes_ = 12;
  }
  if (length > (std::uint64_t{1} << 20))
    throw data_error(where_, fmt::format("a .npy header of {} bytes", length));
  std::vector<std::byte> dict(static_cast<std::size_t>(length));
  in.read(dict);
  header_ = parse_npy_header(
      std::string_view(reinterpret_cast<const char*>(dict.data()), dict.size()), where_);
  header_bytes_ += length;
  item_size_ = element_of(header_.descr, where_).size;
  std::uint64_t count = 1;
  for (const auto d : header_.shape) {
    if (d != 0 &&
        count > std::numeric_limits<std::uint64_t>::max() / 8 / static_cast<std::uint64_t>(d))
      throw data_error(where_, "array shape is too large");
    count *= static_cast<std::uint64_t>(d);
  }
  if (header_bytes_ > at_.uncompressed || count * item_size_ > at_.uncompressed - header_bytes_)
    throw data_error(where_,
                     fmt::format("truncated: the header promises {} bytes of data, the "
                                 "member holds {}",
                                 count * item_size_,
                                 at_.uncompressed - std::min(header_bytes_, at_.uncompressed)));
}

bool npz_member::exists(const fs::path& archive, const std::string& name) {
  auto file = open_archive(archive);
  return find_member(file, archive.string(), name + ".npy").has_value();
}

std::int64_t npz_member::elements() const {
  std::int64_t n = 1;
  for (const auto d : header_.shape) n *= d;
  return n;
}

npz_reader npz_member::reader(std::int64_t first) const {
  npz_reader in(archive_, at_, where_);
  in.skip(header_bytes_ + static_cast<std::uint64_t>(first) * item_size_);
  return in;
}

npz_reader::npz_reader(const fs::path& archive, const npz_member::location& at, std::string where)
    : where_(std::move(where)), file_(open_archive(archive)) {
  file_.seekg(static_cast<std::streamoff>(at.data_offset));
  if (at.method == 8) {
    inflate_ = std::make_unique<inflater>(where_);
    compressed_left_ = at.compressed;
  } else {
    stored_left_ = at.uncompressed;
  }
}

npz_reader::npz_reader(npz_reader&&) noexcept = default;
npz_reader& npz_reader::operator=(npz_reader&&) noexcept = default;
npz_reader::~npz_reader() = default;

void npz_reader::read(std::span<std::byte> out) {
  if (!inflate_) {
    if (out.size() > stored_left_) throw data_error(where_, "truncated: the member ends early");
    file_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (static_cast<std::size_t>(file_.gcount()) != out.size())
      throw data_error(where_, "truncated: the archive ends early");
    stored_left_ -= out.size();
    return;
  }
  z_stream& z = inflate_->z;
  std::size_t filled = 0;
  while (filled < out.size()) {
    if (z.avail_in == 0) {
      if (compressed_left_ == 0) throw data_error(where_, "truncated: the member ends early");
      const auto want = static_cast<std::size_t>(
          std::min<std::uint64_t>(compressed_left_, inflate_->input.size()));
      file_.read(reinterpret_cast<char*>(inflate_->input.data()),
                 static_cast<std::streamsize>(want));
      if (static_cast<std::size_t>(file_.gcount()) != want)
        throw data_error(where_, "truncated: the archive ends early");
      compressed_left_ -= want;
      z.next_in = reinterpret_cast<Bytef*>(inflate_->input.data());
      z.avail_in = static_cast<uInt>(want);
    }
    const auto room = std::min<std::size_t>(out.size() - filled, chunk_bytes * 64);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + filled);
    z.avail_out = static_cast<uInt>(room);
    const int rc = ::inflate(&z, Z_NO_FLUSH);
    filled += room - z.avail_out;
    if (rc == Z_STREAM_END && filled < out.size())
      throw data_error(where_, "truncated: the member ends early");
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      throw data_error(where_, fmt::format("corrupt deflate data ({})", z.msg ? z.msg : "zlib"));
  }
}

void npz_reader::skip(std::uint64_t bytes) {
  if (!inflate_) {
    if (bytes > stored_left_) throw data_error(where_, "truncated: the member ends early");
    file_.seekg(static_cast<std::streamoff>(bytes), std::ios::cur);
    stored_left_ -= bytes;
    return;
  }
  std::vector<std::byte> scratch(
      static_cast<std::size_t>(std::min<std::uint64_t>(bytes, chunk_bytes)));
  while (bytes > 0) {
    const auto now = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, scratch.size()));
    read(std::span(scratch).first(now));
    bytes -= now;
  }
}

void npz_reader::read_integers(const std::string& descr, std::span<std::int64_t> out) {
  const auto t = element_of(descr, where_);
  if (t.kind == 'f')
    throw data_error(where_, fmt::format("has dtype '{}', expected integers", descr));
  raw_.resize(out.size() * t.size);
  read(raw_);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto v = integer_at(raw_.data() + i * t.size, t);
    if (!v) throw data_error(where_, "an unsigned value above 2^63 - 1");
    out[i] = *v;
  }
}

void npz_reader::read_floats(const std::string& descr, std::span<float> out) {
  const auto t = element_of(descr, where_);
  raw_.resize(out.size() * t.size);
  read(raw_);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::byte* p = raw_.data() + i * t.size;
    if (t.kind != 'f') {
      const auto v = integer_at(p, t);
      if (!v) throw data_error(where_, "an unsigned value above 2^63 - 1");
      out[i] = static_cast<float>(*v);
    } else if (t.size == 2)
      out[i] = half_to_float(static_cast<std::uint16_t>(little(p, 2)));
    else if (t.size == 4)
      out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(little(p, 4)));
    else if (t.size == 8)
      out[i] = static_cast<float>(std::bit_cast<double>(little(p, 8)));
    else
      throw data_error(where_, fmt::format("unsupported float dtype '{}'", descr));
  }
}

}  // namespace bulkgnn::data
