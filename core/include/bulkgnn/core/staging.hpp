#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace bulkgnn {

// Staging files and directories (work in progress that a rename publishes)
// carry their owner in their name: "<prefix><pid>-<host>" optionally followed
// by "-<anything>", where <host> is 8 hex digits hashed from the host name
// (TMPDIR or an output directory may be shared by the nodes of a cluster,
// where a process id says nothing about another node's processes). Whatever
// unwinds normally removes its own staging; a process killed outright
// (SIGKILL, power loss) cannot, so the next run sweeps staging whose owner is
// gone.

// "<prefix><pid>-<host>" for this process.
[[nodiscard]] std::string staging_name(std::string_view prefix);
// The same for process `pid` of this host.
[[nodiscard]] std::string staging_name(std::string_view prefix, pid_t pid);

// Removes every entry of `dir` named "<prefix><pid>-<host>[-...]" with this
// host's <host> whose process no longer exists (kill(pid, 0) fails with
// ESRCH). A live owner's staging, even another run's, and any other host's
// are left alone. Best effort: errors are ignored, since the sweep only tidies
// up after others.
void sweep_stale_staging(const std::filesystem::path& dir, std::string_view prefix);

}  // namespace bulkgnn
