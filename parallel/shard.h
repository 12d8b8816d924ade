// How ZeRO cuts a unit across the data-parallel group: the unit's flat elements are
// padded to a multiple of the group size and rank r owns the contiguous shard
// [r * shard, (r + 1) * shard). The padding is zeros that never reach the math or a
// checkpoint: `owned` clips the shard to the unit's real elements.
#pragma once

#include <algorithm>
#include <cstdint>

#include "optim/unit_span.h"

namespace llmft {

struct ShardLayout {
  int64_t numel = 0;   // the unit's real elements
  int64_t padded = 0;  // numel rounded up to a multiple of the group size
  int64_t shard = 0;   // padded / group size
  int64_t begin = 0;   // this rank's first element
  // This rank's real elements (possibly none on the last ranks of a tiny unit).
  UnitSpan owned() const {
    return UnitSpan{std::min(begin, numel), std::min(begin + shard, numel)};
  }
};

inline ShardLayout shard_layout(int64_t numel, int ranks, int rank) {
  ShardLayout s;
  s.numel = numel;
  s.shard = (numel + ranks - 1) / ranks;
  s.padded = s.shard * ranks;
  s.begin = s.shard * rank;
  return s;
}

}  // namespace llmft
