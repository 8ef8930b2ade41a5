#pragma once

#include <filesystem>
#include <string>

namespace bulkgnn {

// What keeps `path` from being read as a file, for the error that names it:
// empty when it is a regular file (or a symlink to one) or does not exist
// (the caller reports a missing file in its own words); else "is a
// directory, not a file", "is a named pipe, not a regular file", "cannot be
// resolved: Too many levels of symbolic links", .... Readers ask before they
// open: opening a named pipe blocks until a writer comes, and a stream over a
// directory fails with an error that names nothing.
[[nodiscard]] std::string not_a_regular_file(const std::filesystem::path& path);

}  // namespace bulkgnn
