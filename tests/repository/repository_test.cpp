// The repository is self-contained: a fresh clone works with nothing beside it, so no
// tracked file may point at the private folder that sits beside the developers' checkouts
// (the data it held is in data/recordings/, see PROVENANCE.md there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = STEER_SOURCE_DIR;

// The path that must not appear, built from pieces so that this file does not contain it.
std::string sibling_folder() { return std::string("..") + "/" + "sha" + "red"; }

// Output of a shell command and its exit status (-1 when it could not run).
std::pair<int, std::string> run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, output};
  char block[4096];
  for (std::size_t n; (n = std::fread(block, 1, sizeof block, pipe)) > 0;) output.append(block, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// Whether STEER_SOURCE_DIR is the top of a git checkout (not a folder inside another one).
bool is_git_checkout() {
  auto [status, top] = run("git -C '" + kRoot.string() + "' rev-parse --show-toplevel 2>/dev/null");
  if (status != 0) return false;
  while (!top.empty() && (top.back() == '\n' || top.back() == '\r')) top.pop_back();
  std::error_code error;
  return fs::equivalent(fs::path(top), kRoot, error);
}

// The files of the repository, relative to its root: git's tracked files in a checkout;
// otherwise (a source archive) every file, leaving out .git and build folders.
std::vector<std::string> repository_files() {
  std::vector<std::string> files;
  if (is_git_checkout()) {
    auto [status, listing] = run("git -C '" + kRoot.string() + "' ls-files -z");
    EXPECT_EQ(status, 0) << "git ls-files failed";
    std::istringstream in(listing);
    for (std::string name; std::getline(in, name, '\0');) {
      if (!name.empty()) files.push_back(name);
    }
    return files;
  }
  const std::set<std::string> skipped = {".git", "out", ".whl", ".gl", "__pycache__"};
  for (auto it = fs::recursive_directory_iterator(kRoot); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (skipped.count(name) > 0 || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), kRoot).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Compressed and other binary files are not read: their bytes say nothing a user follows.
bool is_text(const fs::path& path, const std::string& contents) {
  const std::string extension = path.extension().string();
  for (const char* binary : {".gz", ".tgz", ".zip", ".png", ".jpg", ".pdf", ".db", ".so", ".a", ".o"}) {
    if (extension == binary) return false;
  }
  return contents.find('\0', 0) == std::string::npos;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// "file:line: text" for every line of the text files that mentions `needle`.
std::vector<std::string> mentions(const std::vector<std::string>& files, const std::string& needle) {
  std::vector<std::string> found;
  for (const std::string& file : files) {
    const fs::path path = kRoot / file;
    if (!fs::is_regular_file(path)) continue;  // tracked, but deleted in the working tree
    const std::string contents = read(path);
    if (!is_text(path, contents) || contents.find(needle) == std::string::npos) continue;
    std::istringstream lines(contents);
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (line.find(needle) != std::string::npos) {
        found.push_back(file + ":" + std::to_string(number) + ": " + line.substr(0, 160));
      }
    }
  }
  return found;
}

TEST(Repository, ListsItsOwnFiles) {
  const std::vector<std::string> files = repository_files();
  for (const char* expected : {"CMakeLists.txt", "README.md", "tests/CMakeLists.txt", "tests/repository/repository_test.cpp",
                               "data/recordings/PROVENANCE.md"}) {
    EXPECT_NE(std::find(files.begin(), files.end(), expected), files.end()) << expected;
  }
  EXPECT_EQ(sibling_folder().size(), 9u);
}

TEST(Repository, FindsAMentionOfTheFolderBesideTheCheckout) {
  // The search itself, on this test's own file: it holds the pieces, never the whole path.
  EXPECT_THAT(mentions({"tests/repository/repository_test.cpp"}, sibling_folder()), ::testing::IsEmpty());
  EXPECT_THAT(mentions({"tests/repository/repository_test.cpp"}, std::string("\"sha\" + \"red\"")),
              ::testing::SizeIs(1));
}

TEST(Repository, NoFileMentionsTheFolderBesideTheCheckout) {
  // Everything the tests, scripts and docs use lies inside the repository (data/recordings/
  // for other tools' recordings); benchmark_hub's larger set comes from
  // scripts/fetch-benchmark-hub into a folder the user names.
  const std::vector<std::string> found = mentions(repository_files(), sibling_folder());
  std::ostringstream list;
  for (const std::string& line : found) list << "\n  " << line;
  EXPECT_TRUE(found.empty()) << found.size() << " lines mention " << sibling_folder() << ":" << list.str();
}

}  // namespace
