#pragma once
// What a tuning's results depend on, part by part (steer/store.hpp TuningContent): the key
// under which a run resumes the tests the store holds. docs/cli.md "What makes a tuning the
// same" explains it for users.
//
// Parts of the spec, each the hash of a canonical text of the parsed spec, so that a
// description, the JSON's layout or the spacing of an expression change nothing:
//   parameters   names, types and values, in order
//   constraints  each expression's tokens (a callable's label)
//   kernel       entry point, launch geometry (or that a function gives it), compiler
//                options, the arguments' names, types, sizes, initialisers, outputs and
//                scalar values
//   size         the tuned size's name and variables
//   reference    how outputs are checked: a CPU function, a configuration, files of expected
//                outputs (which), a reference kernel (entry point, launch geometry) or a
//                function in code; each output's comparison (tolerances, ULPs, ignored, or a
//                function in code)
// Left out because they change no measurement: the description, the other sizes, `flops`
// and `bytes` (work rates are computed when reported), `compute_bound` (a searcher's hint),
// and the hang timeout (`kernel.timeout_ms`, --timeout-ms): it decides only whether a launch
// slower than it is given up, not what any finished launch measures. Like --max-test-ms, it
// bounds what a run may spend on a test; raising it must not discard a tuning's tests (the
// configurations stored as `timeout` keep that status on resume).
// Functions given in code (DeviceCallbacks, a callable constraint) count by their presence:
// their code is not seen.
// Then what the run reads and runs on:
//   kernel source     the text of the source for the backend's language (a file's, or the
//                     text given in code)
//   include NAME      the text of each file it includes, found as the compiler finds it
//                     (quoted includes beside the including file, then the include folders;
//                     <...> in the include folders), or "absent"; nested includes too
//   reference kernel source, reference include NAME
//                     the same for a reference kernel
//   reference file NAME
//                     the bytes of the file of expected outputs of output NAME, at this size
//   input data        the bytes of every argument as initialised (random, constant, a file);
//                     of a buffer bound to an application's memory (steer/embed.hpp), its
//                     name only: its shape is in `kernel`, and its values are the
//                     application's data of the moment
//   compiler, driver  versions as the backend reports them
//   device, backend   names

#include <string>

#include "steer/backend.hpp"
#include "steer/device.hpp"
#include "steer/spec.hpp"
#include "steer/store.hpp"
#include "steer/tuner.hpp"

namespace steer::tuner_detail {

// The spec's parts (the first five above) for `size`, with what `callbacks` give in code in
// place of the spec's launch geometry, reference and comparisons.
TuningContent spec_content(const Spec& spec, const ProblemSize& size, const DeviceCallbacks& callbacks = {});

// Every part: the spec's, the source and its includes as `program` holds them (its text and
// include folders), the reference's kernel or files, the initialised arguments and the
// device. Throws SpecError when a reference kernel's source cannot be read.
// `input_digest`: input_data_digest(spec, program), when the caller has it already (hashing
// gigabytes of arguments takes a second).
TuningContent tuning_content(const Spec& spec, const ProblemSize& size, const Program& program,
                             const DeviceInfo& device, const DeviceCallbacks& callbacks = {},
                             const std::string* input_digest = nullptr);

// The part "input data": every argument's name and initialised bytes, except the values of a
// buffer bound to the application's memory (is_application_memory), which hold the data of
// the moment.
std::string input_data_digest(const Spec& spec, const Program& program);
bool is_application_memory(const Spec& spec, const Program& program, std::size_t argument);

// The files `source` includes, directly or not, by the name the part is given (the path
// relative to `source_file`'s folder where the file lies under it, else the name as written):
// the file's text, or nullopt when no folder has it.
std::map<std::string, std::optional<std::string>> included_files(const std::string& source,
                                                                  const std::filesystem::path& source_file,
                                                                  const std::vector<std::string>& include_dirs);

}  // namespace steer::tuner_detail
