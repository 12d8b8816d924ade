// Host counts from every rank (memory peaks, bytes read), gathered so that rank 0 can
// report the worst or each rank's.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "core/backend.h"

namespace llmft {

// Collective over `world`: every rank's `mine` (the same length on every rank), rank by
// rank. Null `world`: just `mine`. The values move bit for bit through buffers outside the
// run's allocator and peaks.
std::vector<uint64_t> gather_rank_values(Communicator* world, Backend& backend,
                                         const std::vector<uint64_t>& mine);

}  // namespace llmft
