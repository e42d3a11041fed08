#include "tuner/tuning_content.hpp"

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/content_hash.hpp"
#include "expression/expression.hpp"
#include "store/result_json.hpp"  // store_detail::to_json: a Value with its type, as the store writes it

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

}  // namespace

TuningContent spec_content(const Spec& spec, const ProblemSize& size) {
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
    for (const std::string& grid : kernel.launch.grid) text.expression("grid", grid);
    for (const std::string& block : kernel.launch.block) text.expression("block", block);
    text.expression("shared_memory_bytes", kernel.launch.shared_memory_bytes);
    for (const std::string& option : kernel.compiler_options) text.add("compiler_option", option);
    for (const Argument& argument : kernel.arguments) {
      text.add("argument", argument.name).add("type", to_string(argument.type));
      if (!argument.is_buffer) {
        text.expression("scalar", argument.value);
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
  switch (reference.kind) {
    case Reference::Kind::None: checked.add("kind", "none"); break;
    case Reference::Kind::Cpu: checked.add("kind", "cpu").add("function", reference.cpu_function); break;
    case Reference::Kind::Configuration:
      checked.add("kind", "configuration");
      for (const auto& [name, value] : reference.configuration) checked.value(name, value);
      break;
  }
  if (reference.kind != Reference::Kind::None) {
    checked.add("abs_tolerance", fmt::format("{}", reference.abs_tolerance));
    checked.add("rel_tolerance", fmt::format("{}", reference.rel_tolerance));
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

TuningContent tuning_content(const Spec& spec, const ProblemSize& size, const Program& program,
                             const fs::path& source_file, const DeviceInfo& device) {
  TuningContent content = spec_content(spec, size);
  content["kernel source"] = ContentHash::of(program.source);
  for (const auto& [name, text] : included_files(program.source, source_file, program.include_dirs)) {
    content["include " + name] = text ? ContentHash::of(*text) : "absent";
  }
  ContentHash inputs;
  for (const HostArgument& argument : program.arguments) {
    inputs.add(argument.name);
    inputs.add(argument.data);
  }
  content["input data"] = inputs.hex();
  if (!device.compiler_version.empty()) content["compiler"] = device.compiler_version;
  if (!device.driver_version.empty()) content["driver"] = device.driver_version;
  content["device"] = device.name;
  content["backend"] = device.backend;
  return content;
}

}  // namespace steer::tuner_detail
