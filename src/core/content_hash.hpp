#pragma once
// A 128-bit hash of content (text, bytes): what the reference cache and the results store
// key by. Eight bytes at a time in two 64-bit lanes with different multipliers, so that the
// halves are independent enough to make collisions of distinct inputs beyond any practical
// concern; gigabytes of argument data hash in a fraction of a second.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace steer {

class ContentHash {
 public:
  void add(std::span<const std::byte> bytes) {
    const std::size_t words = bytes.size() / 8;
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t x;
      std::memcpy(&x, bytes.data() + 8 * w, 8);
      mix(x);
    }
    std::uint64_t tail = 0;
    if (bytes.size() > 8 * words) std::memcpy(&tail, bytes.data() + 8 * words, bytes.size() - 8 * words);
    // The length closes every piece: "ab" + "c" and "a" + "bc" hash differently.
    mix(tail ^ (static_cast<std::uint64_t>(bytes.size()) << 56));
  }
  void add(std::string_view text) { add(std::as_bytes(std::span(text.data(), text.size()))); }
  // 32 hexadecimal digits.
  std::string hex() const { return fmt::format("{:016x}{:016x}", a_, b_); }

 private:
  void mix(std::uint64_t x) {
    a_ = (a_ ^ x) * 0x9E3779B97F4A7C15ull;
    a_ ^= a_ >> 29;
    b_ = (b_ + x) * 0xC2B2AE3D27D4EB4Full;
    b_ ^= b_ >> 31;
  }
  std::uint64_t a_ = 0x243F6A8885A308D3ull, b_ = 0x13198A2E03707344ull;
};

// The hash of one text.
inline std::string content_hash(std::string_view text) {
  ContentHash hash;
  hash.add(text);
  return hash.hex();
}

}  // namespace steer
