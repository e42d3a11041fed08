#include "core/fresh_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace steer {
namespace {

// 96 MiB: above the size where the work is split over threads, so the threaded paths run.
constexpr std::size_t kLarge = std::size_t{96} << 20;

bool zeros_only(const std::vector<std::byte>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

TEST(ResizeZeroed, GivesZeroBytesOfTheSizeAskedForLargeAndSmall) {
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, kLarge + 3}) {
    std::vector<std::byte> buffer;
    resize_zeroed(buffer, size);
    EXPECT_EQ(buffer.size(), size);
    EXPECT_TRUE(zeros_only(buffer)) << size;
  }
}

TEST(ResizeZeroed, DropsWhatTheBufferHeld) {
  std::vector<std::byte> buffer(1000, std::byte{7});
  resize_zeroed(buffer, kLarge);
  EXPECT_EQ(buffer.size(), kLarge);
  EXPECT_TRUE(zeros_only(buffer));
  buffer.assign(10, std::byte{9});
  resize_zeroed(buffer, 5);
  EXPECT_EQ(buffer, std::vector<std::byte>(5));
}

TEST(CopyParallel, CopiesEveryByteAtAnyLengthAndAlignment) {
  std::vector<std::uint8_t> source(kLarge + 1001);
  std::iota(source.begin(), source.end(), std::uint8_t{1});
  for (const std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
    for (const std::size_t length : {std::size_t{0}, std::size_t{17}, kLarge + 997}) {
      std::vector<std::uint8_t> destination(length + 8, 0);
      copy_parallel(destination.data() + offset, source.data() + 1, length);
      EXPECT_TRUE(std::equal(destination.begin() + offset, destination.begin() + offset + length, source.begin() + 1))
          << offset << " " << length;
      EXPECT_EQ(std::count(destination.begin(), destination.begin() + offset, 0), offset);
      EXPECT_EQ(std::count(destination.begin() + offset + length, destination.end(), 0), 8 - offset);
    }
  }
}

TEST(PopulatePages, LeavesContentsAsTheyWere) {
  std::vector<std::uint8_t> data(kLarge);
  std::iota(data.begin(), data.end(), std::uint8_t{0});
  populate_pages(data.data() + 1, data.size() - 2);  // an unaligned range: its whole pages only
  for (std::size_t i = 0; i < data.size(); i += 4093) ASSERT_EQ(data[i], static_cast<std::uint8_t>(i)) << i;
}

TEST(AllZero, FindsOneNonZeroByteWhereverItIs) {
  for (const std::size_t size :
       {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{12293}}) {
    std::vector<std::byte> buffer(size + 1);  // tested from offset 1: unaligned
    EXPECT_TRUE(all_zero(buffer.data() + 1, size)) << size;
    for (const std::size_t at : {std::size_t{0}, size / 2, size - 1}) {
      buffer[1 + at] = std::byte{0x80};
      EXPECT_FALSE(all_zero(buffer.data() + 1, size)) << size << " " << at;
      buffer[1 + at] = std::byte{0};
    }
    buffer[0] = std::byte{1};  // outside the range
    EXPECT_TRUE(all_zero(buffer.data() + 1, size)) << size;
  }
  EXPECT_TRUE(all_zero(nullptr, 0));
}

}  // namespace
}  // namespace steer
