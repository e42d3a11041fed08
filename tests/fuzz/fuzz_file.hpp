#pragma once
// The fuzzer's input as a file, for readers that take a path: one per process, rewritten for
// each input.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

inline std::filesystem::path fuzz_input_file(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_fuzz_" + std::to_string(::getpid()) + suffix);
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return file;
}
