#include "kept_arrays.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace bulkgnn::sampler::detail {

namespace {

constexpr char kept_magic[16] = {'b', 'u', 'l', 'k', 'g', 'n', 'n', '-',
                                 'k', 'e', 'p', 't', '-', 'v', '1', '\0'};

}  // namespace

digest_hasher topology_hasher(csr_view graph) {
  digest_hasher hasher;
  hasher.add(static_cast<std::uint64_t>(graph.rows));
  for (std::int64_t v = 0; v <= graph.rows; ++v)
    hasher.add(static_cast<std::uint64_t>(graph.indptr[v] - graph.indptr.front()));
  hasher.add(graph.indices.first(static_cast<std::size_t>(graph.nnz())));
  return hasher;
}

std::filesystem::path kept_file(const std::filesystem::path& cache_dir, std::string_view what,
                                std::uint64_t key) {
  return cache_dir / fmt::format("{}-{:016x}.bin", what, key);
}

bool read_kept(const std::filesystem::path& file, std::uint64_t key,
               std::span<const std::span<std::byte>> into) {
  std::ifstream in(file, std::ios::binary);
  char magic[sizeof kept_magic] = {};
  std::uint64_t found_key = 0;
  std::uint64_t count = 0;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kept_magic, sizeof magic) != 0 ||
      !in.read(reinterpret_cast<char*>(&found_key), sizeof found_key) || found_key != key ||
      !in.read(reinterpret_cast<char*>(&count), sizeof count) || count != into.size())
    return false;
  for (const auto& array : into) {
    std::uint64_t found = 0;
    if (!in.read(reinterpret_cast<char*>(&found), sizeof found) || found != array.size())
      return false;
  }
  for (const auto& array : into)
    if (!in.read(reinterpret_cast<char*>(array.data()), static_cast<std::streamsize>(array.size())))
      return false;
  return in.peek() == std::char_traits<char>::eof();  // not longer than written
}

void write_kept(const std::filesystem::path& file, std::uint64_t key,
                std::span<const std::span<const std::byte>> arrays) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec)
    throw data_error(file.parent_path().string(),
                     fmt::format("cannot make the subgraph cache directory: {}", ec.message()));
  std::string partial = file.string() + ".tmp-XXXXXX";
  const int fd = ::mkstemp(partial.data());
  if (fd < 0)
    throw data_error(file.string(), fmt::format("cannot keep what the sampler made here: {}",
                                                std::strerror(errno)));
  ::close(fd);
  bool written = false;
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    const std::uint64_t count = arrays.size();
    out.write(kept_magic, sizeof kept_magic);
    out.write(reinterpret_cast<const char*>(&key), sizeof key);
    out.write(reinterpret_cast<const char*>(&count), sizeof count);
    for (const auto& array : arrays) {
      const std::uint64_t size = array.size();
      out.write(reinterpret_cast<const char*>(&size), sizeof size);
    }
    for (const auto& array : arrays)
      out.write(reinterpret_cast<const char*>(array.data()),
                static_cast<std::streamsize>(array.size()));
    out.close();
    written = !out.fail();
  }
  if (written) std::filesystem::rename(partial, file, ec);
  if (!written || ec) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw data_error(file.string(),
                     written
                         ? fmt::format("cannot move the kept file into place: {}", ec.message())
                         : std::string("cannot write what the sampler made (is the disk full?)"));
  }
}

}  // namespace bulkgnn::sampler::detail
