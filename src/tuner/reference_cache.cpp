// The on-disk cache of CPU reference outputs (reference_cache.hpp).
#include "tuner/reference_cache.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/content_hash.hpp"

namespace steer::tuner_detail {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'T', 'E', 'E', 'R', 'R', 'E', 'F'};

std::optional<fs::path> cache_folder() {
  const char* off = std::getenv("STEER_REFERENCE_CACHE");
  if (off != nullptr && std::string(off) == "off") return std::nullopt;
  if (const char* dir = std::getenv("STEER_CACHE_DIR"); dir != nullptr && *dir != '\0') return fs::path(dir) / "references";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return fs::path(xdg) / "steer" / "references";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "steer" / "references";
  }
  return std::nullopt;
}

// This build of Steer: a reference function's code can change between builds. The file that
// holds this code (dladdr): the steer program, or the Python module or application that
// links Steer, never merely the process's executable (the Python interpreter).
std::string this_build() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&this_build), &info) == 0 || info.dli_fname == nullptr) {
    return "unknown build";
  }
  std::error_code error;
  const fs::path self = fs::canonical(info.dli_fname, error);
  if (error) return "unknown build";
  const auto size = fs::file_size(self, error);
  const auto time = fs::last_write_time(self, error).time_since_epoch().count();
  return fmt::format("{} {} {}", self.string(), size, time);
}

double threshold_seconds() {
  if (const char* text = std::getenv("STEER_REFERENCE_CACHE_MIN_S"); text != nullptr && *text != '\0') {
    return std::strtod(text, nullptr);
  }
  return 1.0;
}

}  // namespace

std::optional<fs::path> reference_cache_file(const std::string& function, const ProblemSize& size,
                                             std::span<const HostArgument> arguments, const std::string& input_digest,
                                             const std::vector<bool>& application_memory) {
  const std::optional<fs::path> folder = cache_folder();
  if (!folder) return std::nullopt;
  ContentHash hash;
  hash.add(function);
  hash.add(this_build());
  for (const auto& [name, value] : size.variables) hash.add(name + "=" + value.to_string());
  hash.add(input_digest);
  for (std::size_t a = 0; a < arguments.size(); ++a) {
    const HostArgument& argument = arguments[a];
    hash.add(fmt::format("{} {} {} {}", argument.name, static_cast<int>(argument.type), argument.is_buffer,
                         argument.output));
    if (a < application_memory.size() && application_memory[a]) hash.add(argument.data);
  }
  return *folder / (hash.hex() + ".bin");
}

bool read_cached_reference(const fs::path& file, ReferenceOutputs& outputs) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  char magic[8];
  std::uint64_t count = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return false;
  if (!in.read(reinterpret_cast<char*>(&count), 8) || count != outputs.size()) return false;
  for (auto& output : outputs) {
    std::uint64_t bytes = 0;
    if (!in.read(reinterpret_cast<char*>(&bytes), 8) || bytes != output.size()) return false;
    if (!in.read(reinterpret_cast<char*>(output.data()), static_cast<std::streamsize>(bytes))) return false;
  }
  return in.peek() == std::char_traits<char>::eof();
}

void write_cached_reference(const fs::path& file, const ReferenceOutputs& outputs, double seconds) {
  if (seconds < threshold_seconds()) return;
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) return;
  std::string temporary = file.string() + ".XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return;
  ::close(fd);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::uint64_t count = outputs.size();
    out.write(kMagic, 8).write(reinterpret_cast<const char*>(&count), 8);
    for (const auto& output : outputs) {
      const std::uint64_t bytes = output.size();
      out.write(reinterpret_cast<const char*>(&bytes), 8);
      out.write(reinterpret_cast<const char*>(output.data()), static_cast<std::streamsize>(bytes));
    }
    if (!out.flush()) {
      fs::remove(temporary, error);
      return;
    }
  }
  fs::rename(temporary, file, error);
  if (error) fs::remove(temporary, error);
}

}  // namespace steer::tuner_detail
