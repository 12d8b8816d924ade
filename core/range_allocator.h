// RangeAllocator: hands out pieces of one address range (a device memory slab reserved
// once): first fit over the free ranges, kept by address, neighbours merged on release.
// It only does the bookkeeping — the addresses are never touched — so a device backend's
// memory (core/cuda/cuda_memory.h) uses it and CPU tests check it.
// Thread-safety: one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace llmft {

class RangeAllocator {
 public:
  RangeAllocator(uintptr_t base, size_t size);

  // The start of a free piece of `bytes`, or 0 when no free range is large enough.
  // REQUIRES: bytes > 0
  uintptr_t allocate(size_t bytes);
  // REQUIRES: [start, start + bytes) was handed out by allocate(bytes) and not released.
  void release(uintptr_t start, size_t bytes);

  size_t size() const { return size_; }
  size_t free_bytes() const;
  // The largest free range: what one allocation can still get.
  size_t largest_free() const;
  size_t free_ranges() const { return free_.size(); }

 private:
  size_t size_;
  std::map<uintptr_t, size_t> free_;  // start -> bytes: disjoint, never adjacent
};

}  // namespace llmft
