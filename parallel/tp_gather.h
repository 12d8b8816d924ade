// Moving whole-model values to and from tensor-parallel slices for checkpoints: saving
// gathers every rank's slice of a unit into the whole unit; loading cuts this rank's
// slice out of the whole unit read from a file.
#pragma once

#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/tp_slice.h"

namespace llmft {

// The whole unit (laid out as `whole`) from every rank's slice values (`mine`, laid out
// as `local`). Collective over `group`: every rank gets the whole unit. Without a group
// (no tensor parallelism) `mine` is the one slice, and only its vocabulary padding is
// dropped.
std::vector<float> gather_tp_unit(Communicator* group, Backend& backend, Allocator& allocator,
                                  const UnitLayout& whole, const UnitLayout& local,
                                  const std::vector<float>& mine);

}  // namespace llmft
