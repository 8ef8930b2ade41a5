// Feeds the input to load_checkpoint as checkpoint.bin with a valid CRC-32
// appended, so that mutations reach the parser rather than stopping at the
// checksum, then compares the fingerprint it holds with a run's settings.
#include <zlib.h>

#include <cstdint>
#include <string>

#include "bulkgnn/trainer/checkpoint.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bulkgnn;
  std::string content(fuzz::as_text(data, size));
  const auto crc =
      static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
  content.append(reinterpret_cast<const char*>(&crc), sizeof crc);

  const fuzz::scratch_dir dir;
  fuzz::write_file(trainer::checkpoint_path(dir.path()), content);
  fuzz::expect_clean_outcome([&] {
    const auto c = trainer::load_checkpoint(dir.path());
    if (!c) std::abort();
    const nlohmann::json settings{{"dataset", "cora"}, {"seed", 0}, {"hidden", 16}};
    trainer::check_fingerprint(c->fingerprint, settings, trainer::checkpoint_path(dir.path()));
  });
  return 0;
}
