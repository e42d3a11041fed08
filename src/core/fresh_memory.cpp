#include "core/fresh_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack the name
#endif

namespace steer {
namespace {

// Below this a thread costs about as much as it saves.
constexpr std::size_t kPerThread = std::size_t{32} << 20;

std::size_t threads_for(std::size_t bytes) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(bytes / kPerThread, 1, cores);
}

// Runs part(first, last) over [0, bytes) split into `count` pieces of whole `grain`s, the
// first piece on the calling thread.
template <typename Part>
void split(std::size_t bytes, std::size_t count, std::size_t grain, Part part) {
  const std::size_t chunk = (bytes / count + grain - 1) / grain * grain;
  std::vector<std::jthread> workers;
  for (std::size_t t = 1; t < count && t * chunk < bytes; ++t) {
    workers.emplace_back(part, t * chunk, std::min(bytes, (t + 1) * chunk));
  }
  part(std::size_t{0}, std::min(bytes, chunk));
}

}  // namespace

void populate_pages(void* data, std::size_t bytes) {
  const std::size_t count = threads_for(bytes);
  if (count < 2) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end <= begin) return;
  split(end - begin, count, page, [begin](std::size_t first, std::size_t last) {
    // Failure (an older kernel) only leaves the pages to fault on first use.
    (void)::madvise(reinterpret_cast<void*>(begin + first), last - first, MADV_POPULATE_WRITE);
  });
}

void resize_zeroed(std::vector<std::byte>& buffer, std::size_t bytes) {
  buffer.clear();
  if (threads_for(bytes) > 1) {
    buffer.reserve(bytes);  // allocated, not yet touched: nothing of it is an object yet
    populate_pages(buffer.data(), bytes);
  }
  buffer.resize(bytes);
}

void copy_parallel(void* destination, const void* source, std::size_t bytes) {
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  split(bytes, threads_for(bytes), 64, [to, from](std::size_t first, std::size_t last) {
    std::memcpy(to + first, from + first, last - first);
  });
}

bool all_zero(const void* data, std::size_t bytes) {
  static constexpr std::array<std::byte, 4096> kZeros{};
  const auto* at = static_cast<const std::byte*>(data);
  while (bytes > 0) {
    const std::size_t n = std::min(bytes, kZeros.size());
    if (std::memcmp(at, kZeros.data(), n) != 0) return false;
    at += n;
    bytes -= n;
  }
  return true;
}

}  // namespace steer
