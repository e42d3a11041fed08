#include "tuner/tuning_content.hpp"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/content_hash.hpp"
#include "expression/expression.hpp"
#include "measure/expected_output.hpp"
#include "store/result_json.hpp"  // store_detail::to_json: a Value with its type, as the store writes it
#include "tuner/kernel_problem.hpp"

namespace steer::tuner_detail {
namespace {

namespace fs = std::filesystem;

// One canonical text per part: fields in a fixed order, one per line, values typed.
class CanonicalText {
 public:
  CanonicalText& add(std::string_view field, std::string_view value) {
    text_ += fmt::format("{}={}\n", field, value);
    return *this;
  }
  CanonicalText& value(std::string_view field, const Value& value) {
    return add(field, store_detail::to_json(value).dump());
  }
  CanonicalText& expression(std::string_view field, std::string_view text) {
    return add(field, expr::normalised_text(text));
  }
  std::string hash() const { return ContentHash::of(text_); }

 private:
  std::string text_;
};

const char* initialiser_name(Initialiser::Kind kind) {
  switch (kind) {
    case Initialiser::Kind::Random: return "random";
    case Initialiser::Kind::Constant: return "constant";
    case Initialiser::Kind::Zeros: return "zeros";
    case Initialiser::Kind::File: return "file";
    case Initialiser::Kind::Iota: return "iota";
    case Initialiser::Kind::Memory: return "memory";
  }
  return "?";
}

std::optional<std::string> read_text(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `#include "name"` or `#include <name>` at the start of a line: the name, and whether quoted.
std::vector<std::pair<std::string, bool>> include_directives(const std::string& source) {
  static const std::regex directive(R"(^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"])");
  std::vector<std::pair<std::string, bool>> names;
  std::istringstream lines(source);
  std::smatch match;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("include") == std::string::npos) continue;
    if (std::regex_search(line, match, directive)) names.emplace_back(match[2].str(), match[1].str() == "\"");
  }
  return names;
}

void add_launch(CanonicalText& text, const LaunchSpec& launch) {
  for (const std::string& grid : launch.grid) text.expression("grid", grid);
  for (const std::string& block : launch.block) text.expression("block", block);
  text.expression("shared_memory_bytes", launch.shared_memory_bytes);
}

// How one output is compared, in words.
std::string comparison_text(const Comparison& comparison) {
  switch (comparison.kind) {
    case Comparison::Kind::Tolerance: return fmt::format("tolerance abs {} rel {}", comparison.abs, comparison.rel);
    case Comparison::Kind::Ulps: return fmt::format("ulps {}", comparison.ulps);
    case Comparison::Kind::Ignore: return "ignore";
  }
  return "?";
}

// A source's text (part `source_part`) and the files it includes (parts "`include_prefix`NAME").
void add_source(TuningContent& content, const std::string& source_part, const std::string& include_prefix,
                const std::string& source, const fs::path& source_file, const std::vector<std::string>& include_dirs) {
  content[source_part] = ContentHash::of(source);
  for (const auto& [name, text] : included_files(source, source_file, include_dirs)) {
    content[include_prefix + name] = text ? ContentHash::of(*text) : "absent";
  }
}

// Where the source of `language` came from: its file, or for a text given in code its
// made-up name (no folder: quoted includes are looked for in the working directory).
fs::path source_file(const std::map<Language, fs::path>& files, const std::map<Language, std::string>& texts,
                     Language language, const std::string& source_name) {
  if (texts.contains(language)) return source_name;
  const auto file = files.find(language);
  return file != files.end() ? file->second : fs::path(source_name);
}

}  // namespace

TuningContent spec_content(const Spec& spec, const ProblemSize& size, const DeviceCallbacks& callbacks) {
  TuningContent content;
  CanonicalText parameters;
  for (const Parameter& parameter : spec.space.parameters()) {
    parameters.add("parameter", parameter.name).add("type", to_string(parameter.type));
    for (const Value& value : parameter.values) parameters.value("value", value);
  }
  content["parameters"] = parameters.hash();

  CanonicalText constraints;
  for (const Constraint& constraint : spec.space.constraints()) {
    if (constraint.callable) {
      constraints.add("callable", constraint.label);
    } else {
      constraints.expression("constraint", constraint.expression);
    }
  }
  content["constraints"] = constraints.hash();

  if (spec.kernel) {
    const KernelSpec& kernel = *spec.kernel;
    CanonicalText text;
    text.add("entry", kernel.name);
    if (callbacks.launch) {
      text.add("launch", "function");  // given in code: its code is not seen
    } else {
      add_launch(text, kernel.launch);
    }
    for (const std::string& option : kernel.compiler_options) text.add("compiler_option", option);
    for (const Argument& argument : kernel.arguments) {
      text.add("argument", argument.name).add("type", to_string(argument.type));
      if (!argument.is_buffer) {
        // A scalar given in code: its bytes are in "input data".
        if (argument.init.kind == Initialiser::Kind::Memory) text.add("scalar", "given in code");
        else text.expression("scalar", argument.value);
        continue;
      }
      const Initialiser& init = argument.init;
      text.expression("buffer", argument.size).add("output", argument.output ? "yes" : "no");
      // A file's bytes are in "input data"; where it lies is not what matters.
      text.add("init", initialiser_name(init.kind));
      if (init.kind == Initialiser::Kind::Random) {
        text.add("seed", std::to_string(init.seed)).add("low", fmt::format("{}", init.low));
        text.add("high", fmt::format("{}", init.high));
      }
      if (init.kind == Initialiser::Kind::Constant) text.add("value", fmt::format("{}", init.value));
    }
    content["kernel"] = text.hash();
  }

  CanonicalText problem;
  problem.add("name", size.name);
  for (const auto& [name, value] : size.variables) problem.value(name, value);
  content["size"] = problem.hash();

  const Reference& reference = spec.reference;
  CanonicalText checked;
  if (callbacks.reference) {
    checked.add("kind", "function");  // given in code: its code is not seen
  } else {
    switch (reference.kind) {
      case Reference::Kind::None: checked.add("kind", "none"); break;
      case Reference::Kind::Cpu: checked.add("kind", "cpu").add("function", reference.cpu_function); break;
      case Reference::Kind::Configuration:
        checked.add("kind", "configuration");
        for (const auto& [name, value] : reference.configuration) checked.value(name, value);
        break;
      case Reference::Kind::Files:
        // Which outputs have a file; the files' bytes are parts of their own, where they lie is
        // not what matters.
        checked.add("kind", "files");
        for (const auto& [name, file] : reference.expected_files) checked.add("file", name);
        break;
      case Reference::Kind::Kernel:
        // Its source and includes are parts of their own.
        checked.add("kind", "kernel").add("entry", reference.kernel.name);
        add_launch(checked, reference.kernel.launch);
        break;
    }
  }
  if (callbacks.reference || reference.kind != Reference::Kind::None) {
    if (spec.kernel) {
      for (const Argument& argument : spec.kernel->arguments) {
        if (!argument.is_buffer || !argument.output) continue;
        checked.add("compare", argument.name);
        checked.add("by", callbacks.comparators.contains(argument.name) ? "function"
                                                                        : comparison_text(reference.comparison(argument.name)));
      }
    } else {
      checked.add("abs_tolerance", fmt::format("{}", reference.abs_tolerance));
      checked.add("rel_tolerance", fmt::format("{}", reference.rel_tolerance));
    }
  }
  content["reference"] = checked.hash();
  return content;
}

std::map<std::string, std::optional<std::string>> included_files(const std::string& source,
                                                                  const fs::path& source_file,
                                                                  const std::vector<std::string>& include_dirs) {
  std::map<std::string, std::optional<std::string>> files;
  const fs::path base = source_file.parent_path();
  std::set<fs::path> visited{fs::weakly_canonical(source_file)};
  // Depth first from the source; each file is read once however often it is included.
  std::vector<std::pair<std::string, fs::path>> pending{{source, base}};
  while (!pending.empty()) {
    auto [text, folder] = std::move(pending.back());
    pending.pop_back();
    for (const auto& [name, quoted] : include_directives(text)) {
      std::vector<fs::path> candidates;
      if (quoted) candidates.push_back(folder / name);
      for (const std::string& dir : include_dirs) candidates.push_back(fs::path(dir) / name);
      std::optional<fs::path> found;
      for (const fs::path& candidate : candidates) {
        std::error_code error;
        if (fs::is_regular_file(candidate, error)) {
          found = candidate;
          break;
        }
      }
      if (!found) {
        files.emplace(name, std::nullopt);
        continue;
      }
      const fs::path canonical = fs::weakly_canonical(*found);
      if (!visited.insert(canonical).second) continue;
      std::optional<std::string> content = read_text(*found);
      files[found->lexically_normal().lexically_relative(base).string()] = content;
      if (content) pending.emplace_back(std::move(*content), found->parent_path());
    }
  }
  return files;
}

bool is_application_memory(const Spec& spec, const Program& program, std::size_t argument) {
  return spec.kernel && argument < spec.kernel->arguments.size() && program.arguments[argument].is_buffer &&
         spec.kernel->arguments[argument].init.kind == Initialiser::Kind::Memory;
}

std::string input_data_digest(const Spec& spec, const Program& program) {
  ContentHash inputs;
  for (std::size_t a = 0; a < program.arguments.size(); ++a) {
    const HostArgument& argument = program.arguments[a];
    inputs.add(argument.name);
    // A buffer bound to an application's memory holds its data of the moment: its shape
    // keys the tuning ("kernel"), its values do not.
    if (is_application_memory(spec, program, a)) {
      inputs.add(std::string_view("application memory"));
    } else {
      inputs.add(argument.data);
    }
  }
  return inputs.hex();
}

TuningContent tuning_content(const Spec& spec, const ProblemSize& size, const Program& program,
                             const DeviceInfo& device, const DeviceCallbacks& callbacks,
                             const std::string* input_digest) {
  TuningContent content = spec_content(spec, size, callbacks);
  if (spec.kernel) {
    add_source(content, "kernel source", "include ", program.source,
               source_file(spec.kernel->sources, spec.kernel->source_texts, program.language, program.source_name),
               program.include_dirs);
  } else {
    content["kernel source"] = ContentHash::of(program.source);
  }

  const Reference& reference = spec.reference;
  if (!callbacks.reference && reference.kind == Reference::Kind::Kernel) {
    // Read as DeviceExecutor::start reads it: the text in code, else the file, whose folder
    // is the include folder.
    const ReferenceKernel& kernel = reference.kernel;
    const std::string name = kernel.name.empty() ? program.kernel_name : kernel.name;
    std::string source_name, directory;
    const std::string source = kernel_source(name, kernel.sources, kernel.source_texts, program.language, source_name,
                                             directory);
    std::vector<std::string> include_dirs;
    if (!directory.empty()) include_dirs.push_back(directory);
    add_source(content, "reference kernel source", "reference include ", source,
               source_file(kernel.sources, kernel.source_texts, program.language, source_name), include_dirs);
  }
  if (!callbacks.reference && reference.kind == Reference::Kind::Files) {
    for (const auto& [name, file] : reference.expected_files) {
      const std::optional<std::string> bytes = read_text(expected_output_file(file, size.name));
      content["reference file " + name] = bytes ? ContentHash::of(*bytes) : "absent";
    }
  }

  content["input data"] = input_digest ? *input_digest : input_data_digest(spec, program);
  if (!device.compiler_version.empty()) content["compiler"] = device.compiler_version;
  if (!device.driver_version.empty()) content["driver"] = device.driver_version;
  content["device"] = device.name;
  content["backend"] = device.backend;
  return content;
}

}  // namespace steer::tuner_detail
