#pragma once
// Gigabytes of fresh memory, touched on every core. The first write to a page costs the
// operating system a fault and a page clear; on one thread a 2.4 GB buffer takes one to
// several seconds of that alone (docs/performance.md, "Setting up a tuning"), and a large
// tuning allocates several. Faulting the pages in on several threads first leaves the
// single-threaded zeroing or copying that follows to run at memory speed.
#include <cstddef>
#include <vector>

namespace steer {

// Faults in the pages of [data, data + bytes) writable, on several threads (Linux 5.14's
// MADV_POPULATE_WRITE). Best effort: where the kernel cannot, the pages fault on first use as
// usual. Small ranges are left alone.
void populate_pages(void* data, std::size_t bytes);

// Resizes `buffer` to `bytes` zero bytes (its contents so far are dropped), with its fresh
// pages faulted in by populate_pages before they are zeroed.
void resize_zeroed(std::vector<std::byte>& buffer, std::size_t bytes);

// memcpy on several threads for large sizes, so that the destination's fresh pages fault in
// parallel.
void copy_parallel(void* destination, const void* source, std::size_t bytes);

// Whether all `bytes` at `data` are zero, at memory speed (a byte-by-byte test of a 2.4 GB
// buffer takes seconds). The workers reset a buffer that starts as zeros with a fill, which
// writes it once, instead of copying a pristine copy over it, which reads one as well.
bool all_zero(const void* data, std::size_t bytes);

}  // namespace steer
