#pragma once

// Streaming reads of the arrays in a .npz archive: a zip file of .npy
// members, as numpy's savez (stored) and savez_compressed (deflated) write
// it, with zip64 records when members or the archive pass 4 GiB. A member is
// never held whole in memory: readers decompress it buffer by buffer, so an
// import of ogbn-papers100M's 1.6 billion edges stays in bounded memory.

#include "bulkgnn/data/npy.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::data {

class npz_reader;

// One .npy member of an archive: where its bytes are and its header.
class npz_member {
 public:
  // Member `name` + ".npy" of `archive`; throws data_error naming the
  // archive and member if either is missing or malformed.
  npz_member(std::filesystem::path archive, const std::string& name);
  // Whether `archive` holds a member `name` + ".npy".
  [[nodiscard]] static bool exists(const std::filesystem::path& archive, const std::string& name);

  [[nodiscard]] const npy_header& header() const { return header_; }
  [[nodiscard]] std::int64_t elements() const;
  [[nodiscard]] std::size_t item_size() const { return item_size_; }
  // "ARCHIVE: NAME.npy", for messages.
  [[nodiscard]] const std::string& where() const { return where_; }
  // A reader at element `first` of the array (in storage order).
  [[nodiscard]] npz_reader reader(std::int64_t first = 0) const;

  struct location {
    std::uint16_t method = 0;  // 0 stored, 8 deflated
    std::uint64_t compressed = 0;
    std::uint64_t uncompressed = 0;
    std::uint64_t data_offset = 0;  // of the member's first byte in the archive
  };

 private:
  std::filesystem::path archive_;
  std::string where_;
  location at_;
  npy_header header_;
  std::size_t item_size_ = 0;
  std::uint64_t header_bytes_ = 0;  // of the .npy header within the member
};

// Sequential bytes of one member, inflated as read.
class npz_reader {
 public:
  npz_reader(const std::filesystem::path& archive, const npz_member::location& at,
             std::string where);
  npz_reader(npz_reader&&) noexcept;
  npz_reader& operator=(npz_reader&&) noexcept;
  ~npz_reader();

  // Fills `out`; throws data_error naming the member if it ends first or is corrupt.
  void read(std::span<std::byte> out);
  void skip(std::uint64_t bytes);

  // The next out.size() elements of a member of `descr` ('<i8', '|u1', ...), as int64.
  void read_integers(const std::string& descr, std::span<std::int64_t> out);
  // The next out.size() elements of a member of `descr` ('<f2', '<f4', '<f8' or an integer type),
  // as float.
  void read_floats(const std::string& descr, std::span<float> out);

 private:
  struct inflater;
  std::string where_;
  std::ifstream file_;
  std::uint64_t compressed_left_ = 0;
  std::uint64_t stored_left_ = 0;
  std::unique_ptr<inflater> inflate_;  // null for a stored member
  std::vector<std::byte> raw_;         // one chunk of elements before conversion
};

}  // namespace bulkgnn::data
