#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace bulkgnn::trainer {

// Everything a run needs to continue exactly where it stopped. All other
// randomness (shuffles, samples, dropout masks) is keyed on (seed, epoch,
// minibatch), so the epoch count is the whole RNG position.
struct checkpoint {
  // The settings that determine the weights (dataset, sampler, model,
  // optimiser, seed); a resumed run must match them field for field.
  nlohmann::json fingerprint;
  std::int64_t epochs_done = 0;
  std::int64_t optimizer_steps = 0;
  std::vector<float> parameters;
  std::vector<float> first_moment;
  std::vector<float> second_moment;
  // The run's per-epoch records so far, so the final summary of a resumed
  // run covers every epoch.
  nlohmann::json history = nlohmann::json::array();
};

// The checkpoint file inside a checkpoint directory.
[[nodiscard]] std::filesystem::path checkpoint_path(const std::filesystem::path& dir);

// Writes atomically (temporary file, then rename): a crash mid-write leaves
// the previous checkpoint intact. The file ends with a CRC-32 of its content.
void save_checkpoint(const std::filesystem::path& dir, const checkpoint& c);

// Reads and verifies the checkpoint in `dir`; nullopt if there is none.
// A truncated, corrupt or foreign file throws data_error naming it.
[[nodiscard]] std::optional<checkpoint> load_checkpoint(const std::filesystem::path& dir);

// Throws option_error naming the first setting in which `saved` and
// `current` differ (a checkpoint from another run is never silently used).
void check_fingerprint(const nlohmann::json& saved, const nlohmann::json& current,
                       const std::filesystem::path& file);

}  // namespace bulkgnn::trainer
