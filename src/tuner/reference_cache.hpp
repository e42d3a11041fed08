#pragma once
// Expected outputs of a CPU reference, cached on disk by the content that determines them:
// the reference function, the build of Steer that computes it, the problem size and every
// argument's bytes. gemm at 4096^3 spends seconds computing its reference; a second run on the
// same inputs reads it back instead.
//
// The cache is a folder of files named by that content's hash: $STEER_CACHE_DIR/references,
// else $XDG_CACHE_HOME/steer/references, else ~/.cache/steer/references. Any file of it may be
// deleted at any time. Only references that took at least $STEER_REFERENCE_CACHE_MIN_S seconds
// (default 1) to compute are kept; STEER_REFERENCE_CACHE=off turns the cache off.
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "steer/backend.hpp"
#include "steer/reference.hpp"
#include "steer/spec.hpp"

namespace steer::tuner_detail {

// The cache file for these inputs (nullopt: the cache is off or has no folder). The arguments'
// bytes enter by `input_digest` (tuning_content.hpp's input_data_digest, which the tuning's
// key needs anyway), except those of the arguments `application_memory` marks, which it
// leaves out and which are hashed here.
std::optional<std::filesystem::path> reference_cache_file(const std::string& function, const ProblemSize& size,
                                                          std::span<const HostArgument> arguments,
                                                          const std::string& input_digest,
                                                          const std::vector<bool>& application_memory);

// Fills `outputs` (sized already) from `file` when it holds outputs of exactly these sizes;
// false otherwise (missing, damaged, of other sizes: computed again).
bool read_cached_reference(const std::filesystem::path& file, ReferenceOutputs& outputs);

// Writes `outputs` to `file` if they took `seconds` >= the threshold to compute (atomically:
// a temporary file renamed into place). Failures to write are ignored: the cache is only a
// cache.
void write_cached_reference(const std::filesystem::path& file, const ReferenceOutputs& outputs, double seconds);

}  // namespace steer::tuner_detail
