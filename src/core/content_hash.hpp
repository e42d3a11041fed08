#pragma once
// A 128-bit hash of content (text, bytes): what the reference cache and the results store
// key by. Four 64-bit lanes take eight bytes each in turn, multiplied by odd constants
// (invertible, so two inputs of a piece that differ in one word differ in its lane), and
// fold into 128 bits at the end; independent lanes let the processor work on four words at
// once, so gigabytes of argument data hash in about a second. Not for adversarial input.
#include <fmt/format.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace steer {

class ContentHash {
 public:
  void add(std::span<const std::byte> bytes) {
    const std::size_t words = bytes.size() / 8;
    std::size_t w = 0;
    for (; w + 4 <= words; w += 4) {
      for (std::size_t lane = 0; lane < 4; ++lane) mix(lane, word(bytes, w + lane));
    }
    for (std::size_t lane = 0; w < words; ++w, ++lane) mix(lane, word(bytes, w));
    std::uint64_t tail = 0;
    if (bytes.size() > 8 * words) std::memcpy(&tail, bytes.data() + 8 * words, bytes.size() - 8 * words);
    // The length closes every piece, in every lane: "ab" + "c" and "a" + "bc" hash differently.
    for (std::size_t lane = 0; lane < 4; ++lane) mix(lane, tail ^ (static_cast<std::uint64_t>(bytes.size()) << 8));
  }
  void add(std::string_view text) { add(std::as_bytes(std::span(text.data(), text.size()))); }
  // The hash of one text, 32 hexadecimal digits. (Spec::hash is another, shorter hash of a
  // spec file's text: steer::content_hash of steer/spec.hpp.)
  static std::string of(std::string_view text) {
    ContentHash hash;
    hash.add(text);
    return hash.hex();
  }
  // 32 hexadecimal digits.
  std::string hex() const {
    std::uint64_t a = (lanes_[0] ^ std::rotl(lanes_[1], 31)) * kMultipliers[2];
    std::uint64_t b = (lanes_[2] ^ std::rotl(lanes_[3], 27)) * kMultipliers[3];
    a ^= a >> 33;
    b ^= b >> 29;
    return fmt::format("{:016x}{:016x}", a, b);
  }

 private:
  static constexpr std::uint64_t kMultipliers[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full,
                                                    0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull};
  static std::uint64_t word(std::span<const std::byte> bytes, std::size_t index) {
    std::uint64_t x;
    std::memcpy(&x, bytes.data() + 8 * index, 8);
    return x;
  }
  void mix(std::size_t lane, std::uint64_t x) {
    std::uint64_t& h = lanes_[lane];
    h = (h ^ x) * kMultipliers[lane];
    h ^= h >> 29;
  }
  std::uint64_t lanes_[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                             0x082EFA98EC4E6C89ull};
};


}  // namespace steer
