// The repository is self-contained: a fresh clone works with nothing beside it, so no
// tracked file may point at the private folder that sits beside the developers' checkouts
// (the data it held is in data/recordings/, see PROVENANCE.md there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
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
  for (const char* binary : {".gz", ".xz", ".tgz", ".zip", ".png", ".jpg", ".pdf", ".db", ".so", ".a", ".o"}) {
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

// A reference to a part of a document, as the docs and comments write them: docs/NAME.md
// followed by ", ", " " or " (" and a quoted title, which may wrap over lines (of a comment,
// too). Each is where it was found and what it names.
struct DocReference {
  std::string where;
  std::string document;
  std::string title;
};

// Whitespace collapsed to single spaces, comment markers at the start of wrapped lines left
// out, and a closing full stop or colon dropped, so that a title compares as a reader sees it.
std::string plain_title(const std::string& text) {
  std::string out;
  bool line_start = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      line_start = true;
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    if (line_start) {
      if (c == ' ' || c == '\t') continue;
      if (text.compare(i, 2, "//") == 0) {
        ++i;
        continue;
      }
      if (c == '#' || c == '*') continue;
      line_start = false;
    }
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '.' || out.back() == ':')) out.pop_back();
  return out;
}

std::vector<DocReference> doc_references(const std::string& file, const std::string& contents) {
  std::vector<DocReference> found;
  const auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  for (std::size_t at = contents.find("docs/"); at != std::string::npos; at = contents.find("docs/", at + 5)) {
    std::size_t end = at + 5;
    while (end < contents.size() && is_name(contents[end])) ++end;
    if (end == at + 5 || contents.compare(end, 3, ".md") != 0) continue;
    const std::string document = contents.substr(at, end + 3 - at);
    std::size_t quote = end + 3;
    if (quote < contents.size() && contents[quote] == ',') ++quote;
    while (quote < contents.size() && contents[quote] == ' ') ++quote;
    if (quote < contents.size() && contents[quote] == '(') ++quote;
    if (quote == end + 3 || quote >= contents.size() || contents[quote] != '"') continue;
    const std::size_t close = contents.find('"', quote + 1);
    if (close == std::string::npos || close - quote > 200) continue;
    const std::string title = plain_title(contents.substr(quote + 1, close - quote - 1));
    if (title.empty()) continue;
    const auto line = std::count(contents.begin(), contents.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
    found.push_back({file + ":" + std::to_string(line), document, title});
  }
  return found;
}

// Whether a document has the part a title names: a heading or a bold run-in title that
// starts with it, or a name in code (a searcher, a spec field) written as `TITLE`.
bool document_has(const std::string& document, const std::string& title) {
  if (document.find("`" + title + "`") != std::string::npos) return true;
  std::istringstream lines(document);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t hashes = line.find_first_not_of('#');
    if (hashes > 0 && hashes != std::string::npos && line[hashes] == ' ' &&
        plain_title(line.substr(hashes + 1)).rfind(title, 0) == 0) {
      return true;
    }
  }
  for (std::size_t open = document.find("**"); open != std::string::npos;) {
    const std::size_t close = document.find("**", open + 2);
    if (close == std::string::npos) break;
    if (plain_title(document.substr(open + 2, close - open - 2)).rfind(title, 0) == 0) return true;
    open = document.find("**", close + 2);
  }
  return false;
}

TEST(Repository, ReadsAReferenceToAPartOfADocument) {
  const std::string text = "see docs/simulate.md, \"What a test\n// costs\" and docs/cli.md (\"Exit codes\").\n"
                           "open(\"docs/cli.md\", \"r\") is no reference";
  const std::vector<DocReference> found = doc_references("x.cpp", text);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].document, "docs/simulate.md");
  EXPECT_EQ(found[0].title, "What a test costs");
  EXPECT_EQ(found[0].where, "x.cpp:1");
  EXPECT_EQ(found[1].title, "Exit codes");
  const std::string document = "# Title\n\n## What a test costs (simulated time)\n\n**Exit codes**, the same\n| `guided` |\n";
  EXPECT_TRUE(document_has(document, "What a test costs"));
  EXPECT_TRUE(document_has(document, "Exit codes"));
  EXPECT_TRUE(document_has(document, "guided"));
  EXPECT_FALSE(document_has(document, "What a replayed test costs"));
  EXPECT_FALSE(document_has(document, "Title of another"));
}

TEST(Repository, EveryReferenceToAPartOfADocumentFindsIt) {
  // A renamed or moved section leaves references to it behind; each must still lead somewhere.
  std::vector<std::string> broken;
  std::size_t checked = 0;
  for (const std::string& file : repository_files()) {
    const fs::path path = kRoot / file;
    if (!fs::is_regular_file(path)) continue;
    const std::string contents = read(path);
    if (!is_text(path, contents)) continue;
    for (const DocReference& reference : doc_references(file, contents)) {
      const fs::path document = kRoot / reference.document;
      ++checked;
      if (!fs::is_regular_file(document)) {
        broken.push_back(reference.where + ": " + reference.document + " does not exist");
      } else if (!document_has(read(document), reference.title)) {
        broken.push_back(reference.where + ": " + reference.document + " has no \"" + reference.title + "\"");
      }
    }
  }
  std::ostringstream list;
  for (const std::string& line : broken) list << "\n  " << line;
  EXPECT_GT(checked, 100u);
  EXPECT_TRUE(broken.empty()) << broken.size() << " of " << checked << " references lead nowhere:" << list.str();
}

}  // namespace
