#include "core/range_allocator.h"

#include <algorithm>
#include <iterator>

namespace llmft {

RangeAllocator::RangeAllocator(uintptr_t base, size_t size) : size_(size) {
  if (size > 0) free_[base] = size;
}

uintptr_t RangeAllocator::allocate(size_t bytes) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    const uintptr_t start = it->first;
    const size_t left = it->second - bytes;
    free_.erase(it);
    if (left > 0) free_[start + bytes] = left;
    return start;
  }
  return 0;
}

void RangeAllocator::release(uintptr_t start, size_t bytes) {
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    const auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      bytes += previous->second;
      free_.erase(previous);
    }
  }
  free_[start] = bytes;
}

size_t RangeAllocator::free_bytes() const {
  size_t total = 0;
  for (const auto& [start, size] : free_) total += size;
  return total;
}

size_t RangeAllocator::largest_free() const {
  size_t largest = 0;
  for (const auto& [start, size] : free_) largest = std::max(largest, size);
  return largest;
}

}  // namespace llmft
