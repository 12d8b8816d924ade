// The worst rank's measured memory: every rank's allocator peak and its breakdown at that
// peak, gathered so that rank 0 reports the largest — the figure each device must hold,
// which the memory model's worst-rank prediction is held to — and the largest device
// peak: a rank's allocator peak plus the device memory it holds outside the allocator
// now (Backend::memory_outside_allocator, measured on a GPU).
#pragma once

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/memory_category.h"

namespace llmft {

struct RankPeak {
  int rank = 0;
  size_t total = 0;
  CategoryBytes at_peak{};
  size_t device_total = 0;  // the largest device peak of any rank
};

// Collective over `world` (null: this rank's own).
RankPeak worst_rank_peak(Communicator* world, Backend& backend, const Allocator& allocator);

}  // namespace llmft
