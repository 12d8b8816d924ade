#include "core/range_allocator.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace llmft {
namespace {

TEST_CASE("a range allocator hands out first fits and merges released neighbours") {
  RangeAllocator ranges(4096, 1000);
  const uintptr_t a = ranges.allocate(100), b = ranges.allocate(200), c = ranges.allocate(300);
  CHECK(a == 4096);
  CHECK(b == 4196);
  CHECK(c == 4396);
  CHECK(ranges.free_bytes() == 400);
  CHECK(ranges.allocate(401) == 0);  // no room
  ranges.release(b, 200);
  CHECK(ranges.free_ranges() == 2);
  CHECK(ranges.allocate(150) == b);  // the first range that fits
  ranges.release(b, 150);
  ranges.release(a, 100);  // merges with the hole after it
  ranges.release(c, 300);  // and everything with the tail
  CHECK(ranges.free_ranges() == 1);
  CHECK(ranges.largest_free() == 1000);
  CHECK(ranges.allocate(1000) == 4096);
}

TEST_CASE("random allocations and releases never overlap and give everything back") {
  RangeAllocator ranges(512, 512 * 1000);
  std::mt19937_64 rng(1);
  struct Piece {
    uintptr_t start;
    size_t bytes;
  };
  std::vector<Piece> live;
  for (int i = 0; i < 5000; ++i) {
    if (!live.empty() && rng() % 2 == 0) {
      const size_t k = rng() % live.size();
      ranges.release(live[k].start, live[k].bytes);
      live.erase(live.begin() + static_cast<long>(k));
      continue;
    }
    const size_t bytes = 512 * (1 + rng() % 20);
    const uintptr_t start = ranges.allocate(bytes);
    if (start == 0) continue;
    for (const Piece& p : live) {
      CHECK((start + bytes <= p.start || p.start + p.bytes <= start));
    }
    CHECK(start % 512 == 0);
    live.push_back({start, bytes});
  }
  for (const Piece& p : live) ranges.release(p.start, p.bytes);
  CHECK(ranges.free_ranges() == 1);
  CHECK(ranges.free_bytes() == 512 * 1000);
}

}  // namespace
}  // namespace llmft
