#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

// What a sampler prepares from the whole graph once (Cluster-GCN's METIS
// clustering, GraphSAINT's presampled counts), kept in
// sampler_options::cache_dir: one file per graph and options, named after a
// key that hashes both, holding a header (a magic word, the key, each
// array's size in bytes) and then the arrays.
namespace bulkgnn::sampler::detail {

// A hash of the graph's topology (row lengths and column ids), to be mixed
// with the options that shape what is kept and a version of the algorithm
// that makes it (bumped when what it makes changes, so that an older file is
// made again rather than read).
[[nodiscard]] digest_hasher topology_hasher(csr_view graph);

// cache_dir / "<what>-<key in hex>.bin".
[[nodiscard]] std::filesystem::path kept_file(const std::filesystem::path& cache_dir,
                                              std::string_view what, std::uint64_t key);

// Fills `into` (each span exactly the size of its kept array) from `file`,
// if it holds a whole set of exactly these sizes under `key`; false
// otherwise (never written, cut short, another key), when `into` may be
// partly overwritten. The caller checks the values.
[[nodiscard]] bool read_kept(const std::filesystem::path& file, std::uint64_t key,
                             std::span<const std::span<std::byte>> into);

// Writes the arrays to a private temporary file beside `file` (mkstemp's:
// readable by its owner only) and renames it into place, so that a reader
// (another rank, a run started meanwhile) sees a whole file or none; the
// temporary file never lingers. Not synced:
// a file torn by a crash fails read_kept's checks and is made again.
// data_error naming the file where it cannot be written.
void write_kept(const std::filesystem::path& file, std::uint64_t key,
                std::span<const std::span<const std::byte>> arrays);

}  // namespace bulkgnn::sampler::detail
