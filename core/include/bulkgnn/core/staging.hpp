#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace bulkgnn {

// Staging files and directories (work in progress that a rename publishes)
// carry their owner's process id in their name: "<prefix><pid>" optionally
// followed by "-<anything>". Whatever unwinds normally removes its own
// staging; a process killed outright (SIGKILL, power loss) cannot, so the
// next run sweeps staging whose owner is gone.

// "<prefix><pid of this process>".
[[nodiscard]] std::string staging_name(std::string_view prefix);

// Removes every entry of `dir` named "<prefix><pid>[-...]" whose process no
// longer exists (kill(pid, 0) fails with ESRCH). A live owner's staging, even
// another run's, is left alone. Best effort: errors are ignored, since the
// sweep only tidies up after others.
void sweep_stale_staging(const std::filesystem::path& dir, std::string_view prefix);

}  // namespace bulkgnn
