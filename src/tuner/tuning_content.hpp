#pragma once
// What a tuning's results depend on, part by part (steer/store.hpp TuningContent): the key
// under which a run resumes the tests the store holds. docs/cli.md "What makes a tuning the
// same" explains it for users.
//
// Parts of the spec, each the hash of a canonical text of the parsed spec, so that a
// description, the JSON's layout or the spacing of an expression change nothing:
//   parameters   names, types and values, in order
//   constraints  each expression's tokens (a callable's label)
//   kernel       entry point, launch geometry, compiler options, the arguments' names,
//                types, sizes, initialisers, outputs and scalar values
//   size         the tuned size's name and variables
//   reference    how outputs are checked: CPU function or configuration, tolerances
// Left out because they change no measurement: the description, the other sizes, `flops`
// and `bytes` (work rates are computed when reported), `compute_bound` (a searcher's hint).
// Then what the run reads and runs on:
//   kernel source     the text of the source for the backend's language
//   include NAME      the text of each file it includes, found as the compiler finds it
//                     (quoted includes beside the including file, then the include folders;
//                     <...> in the include folders), or "absent"; nested includes too
//   input data        the bytes of every argument as initialised (random, constant, a file)
//   compiler, driver  versions as the backend reports them
//   device, backend   names
#include <string>

#include "steer/backend.hpp"
#include "steer/device.hpp"
#include "steer/spec.hpp"
#include "steer/store.hpp"

namespace steer::tuner_detail {

// The spec's parts (the first five above) for `size`.
TuningContent spec_content(const Spec& spec, const ProblemSize& size);

// Every part: the spec's, the source and its includes as `program` holds them (its text and
// include folders; `source_file` is where the text came from), the initialised arguments
// and the device.
TuningContent tuning_content(const Spec& spec, const ProblemSize& size, const Program& program,
                             const std::filesystem::path& source_file, const DeviceInfo& device);

// The files `source` includes, directly or not, by the name the part is given (the path
// relative to `source_file`'s folder where the file lies under it, else the name as written):
// the file's text, or nullopt when no folder has it.
std::map<std::string, std::optional<std::string>> included_files(const std::string& source,
                                                                  const std::filesystem::path& source_file,
                                                                  const std::vector<std::string>& include_dirs);

}  // namespace steer::tuner_detail
