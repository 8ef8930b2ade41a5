#include "bulkgnn/data/npy.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/input_file.hpp"

namespace bulkgnn::data {

namespace {

constexpr std::string_view magic = "\x93NUMPY";
// numpy pads headers so that the data starts on a 64-byte boundary (older
// versions used 16); we write 64 and read either.
constexpr std::size_t header_alignment = 64;

std::string system_reason(const char* what) {
  return fmt::format("{} failed: {}", what, std::strerror(errno));
}

class file_descriptor {
 public:
  file_descriptor(const std::filesystem::path& path, int flags, mode_t mode = 0)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)) {
    if (fd_ < 0) throw data_error(path.string(), system_reason("open"));
  }
  ~file_descriptor() { ::close(fd_); }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::byte* map_or_throw(const std::filesystem::path& path, int fd, std::size_t bytes, int prot,
                        int extra_flags = 0) {
  // mmap rejects zero-length mappings; an empty file simply has no data.
  if (bytes == 0) return nullptr;
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED | extra_flags, fd, 0);
  if (p == MAP_FAILED) throw data_error(path.string(), system_reason("mmap"));
  return static_cast<std::byte*>(p);
}

const char* descr_of(dtype t) {
  switch (t) {
    case dtype::int32:
      return "<i4";
    case dtype::int64:
      return "<i8";
    case dtype::float32:
      return "<f4";
  }
  throw internal_error("unknown dtype");
}

std::optional<dtype> dtype_from_descr(std::string_view descr) {
  // '=' and '|' mean native order, which is little-endian on every host we build for.
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=')) descr.remove_prefix(1);
  if (descr == "i4") return dtype::int32;
  if (descr == "i8") return dtype::int64;
  if (descr == "f4") return dtype::float32;
  return std::nullopt;
}

std::string shape_literal(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// The header exactly as numpy.lib.format (>= 1.20) writes it, same dict and
// same padding rules, so files are byte-identical to np.save's: version 1.0 unless the header
// outgrows its 16-bit length.
std::string make_header(dtype type, const std::vector<std::int64_t>& shape) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 descr_of(type), shape_literal(shape));
  // numpy leaves room for the first dimension to grow to 21 digits in place.
  constexpr std::size_t growth_digits = 21;
  if (!shape.empty()) dict.append(growth_digits - std::to_string(shape[0]).size(), ' ');
  for (const std::size_t len_bytes : {2u, 4u}) {
    const std::size_t prefix = magic.size() + 2 + len_bytes;
    const std::size_t padding = header_alignment - (prefix + dict.size() + 1) % header_alignment;
    const std::size_t len = dict.size() + padding + 1;
    if (len_bytes == 2 && len > std::numeric_limits<std::uint16_t>::max()) continue;
    std::string header(magic);
    header.push_back(static_cast<char>(len_bytes == 2 ? 1 : 2));
    header.push_back(0);
    for (std::size_t i = 0; i < len_bytes; ++i) header.push_back(static_cast<char>(len >> (8 * i)));
    return header + dict + std::string(padding, ' ') + '\n';
  }
  throw internal_error("npy header does not fit a 32-bit length");
}

// A tiny reader for the Python dict literal in a .npy header. It accepts what
// numpy writes (any key order, optional trailing comma, any spacing) and
// nothing more exotic.
class header_parser {
 public:
  header_parser(std::string_view text, std::string path) : text_(text), path_(std::move(path)) {}

  npy_header parse() {
    npy_header h;
    bool have_descr = false;
    bool have_order = false;
    bool have_shape = false;
    expect('{');
    while (!accept('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        h.descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran_ = word();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}' in header", key));
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    if (!have_descr || !have_order || !have_shape)
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    if (fortran_ != "True" && fortran_ != "False") fail("fortran_order is neither True nor False");
    // One dimension reads the same in either order.
    h.fortran_order = fortran_ == "True" && h.shape.size() > 1;
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw data_error(path_, "malformed .npy header: " + reason);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}' at offset {}", c, pos_));
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail(fmt::format("expected a string at offset {}", pos_));
    const char quote = text_[pos_++];
    const auto end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  std::string word() {
    skip_space();
    const auto start = pos_;
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (!accept(')')) {
      skip_space();
      std::int64_t d = 0;
      const auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), d);
      if (ec != std::errc() || d < 0) fail(fmt::format("bad dimension at offset {}", pos_));
      pos_ = static_cast<std::size_t>(ptr - text_.data());
      dims.push_back(d);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  std::string path_;
  std::size_t pos_ = 0;
  std::string fortran_;
};

std::uint32_t little_endian(const std::byte* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::to_integer<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

// Element count, refusing shapes whose byte size (up to 8 bytes each) overflows.
std::int64_t checked_elements(const std::vector<std::int64_t>& shape, const std::string& path) {
  std::int64_t n = 1;
  for (const auto d : shape) {
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / 8 / d)
      throw data_error(path, "array shape is too large");
    n *= d;
  }
  return n;
}

}  // namespace

std::size_t dtype_size(dtype t) { return t == dtype::int64 ? 8 : 4; }

npy_header parse_npy_header(std::string_view dict, const std::string& path) {
  return header_parser(dict, path).parse();
}

mapped_file mapped_file::open_read(const std::filesystem::path& path, bool prefault) {
  if (const auto reason = not_a_regular_file(path); !reason.empty())
    throw data_error(path.string(), reason);
  const file_descriptor fd(path, O_RDONLY);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw data_error(path.string(), system_reason("fstat"));
  if (!S_ISREG(st.st_mode)) throw data_error(path.string(), "not a regular file");
  mapped_file f;
  f.size_ = static_cast<std::size_t>(st.st_size);
  f.data_ = map_or_throw(path, fd.get(), f.size_, PROT_READ, prefault ? MAP_POPULATE : 0);
  f.path_ = path;
  return f;
}

mapped_file mapped_file::create(const std::filesystem::path& path, std::size_t bytes) {
  const file_descriptor fd(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  // Reserve every block now: a sparse file (ftruncate alone) would let a full
  // disk surface later as SIGBUS on a write through the mapping.
  if (bytes > 0) {
    if (const int rc = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)); rc != 0)
      throw data_error(path.string(),
                       fmt::format("cannot reserve {} bytes: {}", bytes, std::strerror(rc)));
  }
  mapped_file f;
  f.size_ = bytes;
  f.data_ = map_or_throw(path, fd.get(), bytes, PROT_READ | PROT_WRITE);
  f.path_ = path;
  return f;
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

mapped_file::~mapped_file() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void mapped_file::sync() const {
  if (data_ != nullptr && ::msync(data_, size_, MS_SYNC) != 0)
    throw data_error(path_.string(), system_reason("msync"));
}

npy_array npy_array::open(const std::filesystem::path& path, bool prefault) {
  npy_array a;
  a.path_ = path;
  a.file_ = mapped_file::open_read(path, prefault);
  const std::string name = path.string();
  const std::byte* p = a.file_.data();
  const std::size_t size = a.file_.size();
  if (size < magic.size() + 4 || std::memcmp(p, magic.data(), magic.size()) != 0)
    throw data_error(name, "not a .npy file (bad magic)");
  const auto major = std::to_integer<int>(p[magic.size()]);
  if (major < 1 || major > 3)
    throw data_error(name, fmt::format("unsupported .npy version {}", major));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = magic.size() + 2 + len_bytes;
  if (size < prefix) throw data_error(name, "truncated .npy header");
  const std::size_t header_len = little_endian(p + magic.size() + 2, len_bytes);
  if (size < prefix + header_len) throw data_error(name, "truncated .npy header");
  const std::string_view text(reinterpret_cast<const char*>(p + prefix), header_len);
  const auto header = parse_npy_header(text, name);
  const auto type = dtype_from_descr(header.descr);
  if (!type)
    throw data_error(name, fmt::format("malformed .npy header: unsupported dtype '{}' (expected "
                                       "'<i4', '<i8' or '<f4')",
                                       header.descr));
  if (header.fortran_order)
    throw data_error(name, "malformed .npy header: Fortran-order arrays are not supported");
  a.type_ = *type;
  a.shape_ = header.shape;
  a.header_bytes_ = prefix + header_len;
  // as<T>() hands out the mapping as T*: an unaligned start would be undefined
  // behaviour. numpy pads the header to 16 or 64 bytes, so this rejects no real file.
  if (a.header_bytes_ % dtype_size(a.type_) != 0)
    throw data_error(name,
                     fmt::format("data at byte offset {} is not aligned to its {}-byte elements",
                                 a.header_bytes_, dtype_size(a.type_)));

  const auto data_bytes =
      static_cast<std::size_t>(checked_elements(a.shape_, name)) * dtype_size(a.type_);
  if (size - a.header_bytes_ < data_bytes)
    throw data_error(name, fmt::format("truncated: header promises {} data bytes, file holds {}",
                                       data_bytes, size - a.header_bytes_));
  return a;
}

npy_array npy_array::create(const std::filesystem::path& path, dtype type,
                            std::vector<std::int64_t> shape) {
  npy_array a;
  a.path_ = path;
  a.type_ = type;
  const std::string header = make_header(type, shape);
  const auto data_bytes =
      static_cast<std::size_t>(checked_elements(shape, path.string())) * dtype_size(type);
  a.shape_ = std::move(shape);
  a.header_bytes_ = header.size();
  a.file_ = mapped_file::create(path, header.size() + data_bytes);
  std::memcpy(a.file_.data(), header.data(), header.size());
  return a;
}

std::int64_t npy_array::elements() const {
  std::int64_t n = 1;
  for (const auto d : shape_) n *= d;
  return n;
}

void npy_array::check_type(dtype wanted) const {
  if (wanted != type_)
    throw data_error(path_.string(), fmt::format("has dtype '{}', expected '{}'", descr_of(type_),
                                                 descr_of(wanted)));
}

}  // namespace bulkgnn::data
