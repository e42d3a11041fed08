// The folders are layered: each includes only itself and the folders listed before it in
// the "Layers" table of docs/architecture.md. This test reads that table and every source
// file, and names each include that breaks the order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kSource = STEER_SOURCE_DIR;

struct Layer {
  std::string folder;                // "src/core", "apps/steer", "kernels"
  std::vector<std::string> headers;  // public headers it owns: "value" for include/steer/value.hpp
};

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rows of the table under "## Layers": `folder` | `header` `header` ... | what.
std::vector<Layer> layers_from_architecture_doc() {
  std::istringstream doc(read(kSource / "docs/architecture.md"));
  std::vector<Layer> layers;
  bool in_section = false;
  const std::regex quoted("`([^`]+)`");
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Layers";
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell);
    if (cells.size() < 2) continue;
    Layer layer;
    std::smatch match;
    if (!std::regex_search(cells[0], match, quoted)) continue;
    layer.folder = match[1];
    for (auto it = std::sregex_iterator(cells[1].begin(), cells[1].end(), quoted); it != std::sregex_iterator(); ++it) {
      layer.headers.push_back((*it)[1]);
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

class Layering {
 public:
  explicit Layering(std::vector<Layer> layers) : layers_(std::move(layers)) {
    for (std::size_t rank = 0; rank < layers_.size(); ++rank) {
      for (const std::string& header : layers_[rank].headers) header_rank_[header] = rank;
    }
  }

  const std::vector<Layer>& layers() const { return layers_; }

  // The layer of a file, by the longest listed folder that holds it; public headers by
  // the table's header column.
  std::optional<std::size_t> rank_of_file(const std::string& relative) const {
    static const std::regex public_header("include/steer/([a-z_]+)\\.hpp");
    std::smatch match;
    if (std::regex_match(relative, match, public_header)) return rank_of_header(match[1]);
    std::optional<std::size_t> best;
    std::size_t best_length = 0;
    for (std::size_t rank = 0; rank < layers_.size(); ++rank) {
      const std::string& folder = layers_[rank].folder;
      if (relative.rfind(folder + "/", 0) == 0 && folder.size() > best_length) {
        best = rank;
        best_length = folder.size();
      }
    }
    return best;
  }

  // The layer an include names: "steer/x.hpp" by its owner, "folder/..." as src/folder.
  // nullopt for anything else (system headers, files beside the includer).
  std::optional<std::size_t> rank_of_include(const std::string& include) const {
    static const std::regex public_header("steer/([a-z_]+)\\.hpp");
    std::smatch match;
    if (std::regex_match(include, match, public_header)) return rank_of_header(match[1]);
    const auto slash = include.find('/');
    if (slash == std::string::npos) return std::nullopt;
    const std::string folder = "src/" + include.substr(0, slash);
    for (std::size_t rank = 0; rank < layers_.size(); ++rank) {
      if (layers_[rank].folder == folder) return rank;
    }
    return std::nullopt;
  }

  std::optional<std::size_t> rank_of_header(const std::string& header) const {
    auto found = header_rank_.find(header);
    if (found == header_rank_.end()) return std::nullopt;
    return found->second;
  }

 private:
  std::vector<Layer> layers_;
  std::map<std::string, std::size_t> header_rank_;
};

std::vector<std::string> source_files() {
  std::vector<std::string> files;
  for (const char* top : {"src", "include", "apps", "kernels", "python"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kSource / top)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp" && extension != ".cu")) continue;
      files.push_back(fs::relative(entry.path(), kSource).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> quoted_includes(const std::string& text) {
  static const std::regex include("#include \"([^\"]+)\"");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

Layering layering() { return Layering(layers_from_architecture_doc()); }

TEST(Layering, TheArchitectureDocListsTheLayers) {
  const Layering order = layering();
  ASSERT_GE(order.layers().size(), 10u) << "docs/architecture.md has no readable '## Layers' table";
  EXPECT_EQ(order.layers().front().folder, "src/core");
  EXPECT_EQ(order.layers().back().folder, "apps/steer");
}

TEST(Layering, EverySourceFolderHasALayer) {
  const Layering order = layering();
  for (const auto& entry : fs::directory_iterator(kSource / "src")) {
    if (!entry.is_directory()) continue;
    const std::string folder = "src/" + entry.path().filename().string();
    EXPECT_TRUE(order.rank_of_file(folder + "/x.cpp")) << folder << " is not in the Layers table of docs/architecture.md";
  }
}

TEST(Layering, EveryPublicHeaderHasAnOwner) {
  const Layering order = layering();
  for (const auto& entry : fs::directory_iterator(kSource / "include/steer")) {
    const std::string header = entry.path().stem().string();
    EXPECT_TRUE(order.rank_of_header(header))
        << "include/steer/" << header << ".hpp belongs to no folder in the Layers table of docs/architecture.md";
  }
}

TEST(Layering, NoFolderIncludesOneBelowItInTheTable) {
  const Layering order = layering();
  std::vector<std::string> violations;
  for (const std::string& file : source_files()) {
    const auto file_rank = order.rank_of_file(file);
    if (!file_rank) continue;  // checked by EverySourceFolderHasALayer
    for (const std::string& include : quoted_includes(read(kSource / file))) {
      const auto include_rank = order.rank_of_include(include);
      if (include_rank && *include_rank > *file_rank) {
        violations.push_back(file + " (" + order.layers()[*file_rank].folder + ") includes " + include + " (" +
                             order.layers()[*include_rank].folder + ")");
      }
    }
  }
  std::string listed;
  for (const std::string& violation : violations) listed += "\n  " + violation;
  EXPECT_TRUE(violations.empty()) << "includes against the order of docs/architecture.md:" << listed;
}

// The check itself: an include of a higher folder is found, one of a lower is not.
TEST(Layering, TheCheckFindsAnIncludeOfAHigherFolder) {
  const Layering order({{"src/core", {"value"}}, {"src/space", {"space"}}, {"src/tuner", {"tuner"}}});
  EXPECT_EQ(order.rank_of_file("src/space/space.cpp"), 1u);
  EXPECT_EQ(order.rank_of_file("include/steer/tuner.hpp"), 2u);
  EXPECT_EQ(order.rank_of_include("steer/value.hpp"), 0u);
  EXPECT_EQ(order.rank_of_include("tuner/kernel_problem.hpp"), 2u);
  EXPECT_FALSE(order.rank_of_include("work_rate.hpp"));
  EXPECT_FALSE(order.rank_of_include("fmt/format.h"));
  EXPECT_EQ(quoted_includes("#include \"a/b.hpp\"\n#include <c>\n"), std::vector<std::string>{"a/b.hpp"});
}

}  // namespace
