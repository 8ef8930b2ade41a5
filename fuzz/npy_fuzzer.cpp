// Feeds the input to npy_array::open as a whole .npy file, then reads every
// element the header promises.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "bulkgnn/data/npy.hpp"
#include "fuzz_support.hpp"

namespace {

using bulkgnn::data::dtype;
using bulkgnn::data::npy_array;

// An anonymous in-memory file holding the input: nothing to clean up on disk,
// and open() reaches it through /proc/self/fd like any path.
class memory_file {
 public:
  explicit memory_file(std::string_view bytes) : fd_(::memfd_create("npy_fuzzer", MFD_CLOEXEC)) {
    if (fd_ < 0 || ::write(fd_, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
      std::abort();
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

template <class T>
double sum_of(const npy_array& a) {
  double sum = 0;
  for (const T x : a.as<const T>()) sum += static_cast<double>(x);
  return sum;
}

void read_every_element(const npy_array& a, std::size_t file_bytes) {
  // The elements must lie inside the file; reading past it would fault or
  // read beyond the mapping, which AddressSanitizer cannot see.
  if (static_cast<std::size_t>(a.elements()) * bulkgnn::data::dtype_size(a.type()) > file_bytes)
    std::abort();
  volatile double sink = 0;
  switch (a.type()) {
    case dtype::int32:
      sink = sum_of<std::int32_t>(a);
      break;
    case dtype::int64:
      sink = sum_of<std::int64_t>(a);
      break;
    case dtype::float32:
      sink = sum_of<float>(a);
      break;
  }
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const memory_file file(bulkgnn::fuzz::as_text(data, size));
  bulkgnn::fuzz::expect_clean_outcome(
      [&] { read_every_element(npy_array::open(file.path()), size); });
  return 0;
}
