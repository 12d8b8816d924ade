// RankMemory: the memory a layout needs on its worst rank — the memory model's
// breakdown by allocator category at that rank's peak, the phase of the step where it
// peaks (its comm_buffers with the communicators' own device memory, NCCL's, when the
// layout has more than one rank), and the device's fixed overhead on top; with the
// optimizer offloaded, the host pool's peak beside it.
//
// Ranks differ only in their shards: ZeRO pads each unit to a multiple of the
// data-parallel size and the last ranks own fewer real elements, and the tensor-parallel
// shards are even. So the first and last rank of each group bound every rank, and the
// memory model runs for data-parallel ranks {0, dp-1} x tensor-parallel ranks {0, tp-1}:
// at most four dry runs per layout, whatever the world size.
#pragma once

#include <string>

#include "core/memory_category.h"
#include "parallel/planner/device.h"
#include "parallel/planner/layout.h"

namespace llmft {

struct RankMemory {
  CategoryBytes at_peak{};  // the worst rank's breakdown at its peak, without overhead
  size_t overhead = 0;      // the device's fixed overhead
  size_t peak = 0;          // total of at_peak + overhead
  std::string peak_phase;   // e.g. "backward of the head"
  int dp_rank = 0, tp_rank = 0;
  CategoryBytes host_by_category{};  // the host pool's own peak per category (offload)
  size_t host_peak = 0;              // the largest host pool of the ranks predicted
};

RankMemory predict_rank_memory(const Workload& workload, const Layout& layout,
                               const DeviceDescription& device);

}  // namespace llmft
