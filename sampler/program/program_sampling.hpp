#pragma once

#include "bulkgnn/sampler/sampler_program.hpp"
#include "bulkgnn/sampler/sampling_algorithm.hpp"

#include <memory>

namespace bulkgnn::sampler::detail {

// The algorithm that runs `program`'s hop at every hop of a bulk (the
// program must outlive it: registered programs are never removed).
[[nodiscard]] std::unique_ptr<sampling_algorithm> make_program_sampling(
    sampling_context& context, const sampler_program& program);

}  // namespace bulkgnn::sampler::detail
