// How ZeRO cuts a unit across the data-parallel group: the unit's flat elements are
// padded to a multiple of the group size and rank r owns the contiguous shard
// [r * shard, (r + 1) * shard). The padding is zeros that never reach the math or a
// checkpoint: `owned` clips the shard to the unit's real elements.
#pragma once

#include <algorithm>
#include <cstdint>

#include "optim/optimizer.h"
#include "core/unit_span.h"

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

// Whether a fused optimizer reduce-scatters its gradients and updates its shard (LOMO
// from ZeRO-2 on) rather than all-reducing them and updating whole units (AdaLomo, whose
// row and column statistics need whole units, and LOMO below ZeRO-2).
inline bool fused_reduce_scatters(OptimizerKind kind, int zero_stage) {
  return kind == OptimizerKind::lomo && zero_stage >= 2;
}

// The part of a unit this rank's optimizer updates: its shard from ZeRO-1 on (for fused
// optimizers, when they reduce-scatter), the whole unit otherwise.
inline UnitSpan update_span(OptimizerKind kind, int zero_stage, const ShardLayout& shard) {
  const bool sharded = is_fused(kind) ? fused_reduce_scatters(kind, zero_stage) : zero_stage >= 1;
  return sharded ? shard.owned() : UnitSpan{0, shard.numel};
}

inline ShardLayout shard_layout(int64_t numel, int ranks, int rank) {
  ShardLayout s;
  s.numel = numel;
  s.shard = (numel + ranks - 1) / ranks;
  s.padded = s.shard * ranks;
  s.begin = s.shard * rank;
  return s;
}

}  // namespace llmft
