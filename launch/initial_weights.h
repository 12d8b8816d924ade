// --init-from: each rank loads its own slices of a Hugging Face model's weights (one file
// or shards through their index) into the Engine, unit by unit, and rank 0 learns how
// many bytes each rank read.
#pragma once

#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/backend.h"
#include "core/tp_slice.h"
#include "core/unit_layout.h"
#include "parallel/engine.h"

namespace llmft {

// Collective over `world` (null: one rank). `whole` and `local` are the model's unit
// layouts and this rank's tensor-parallel slice of them. Returns, on world rank 0, the
// line that says where the weights came from and the bytes each rank read ("" elsewhere).
std::string load_initial_weights(const std::string& path, Engine& engine,
                                 const std::vector<UnitLayout>& whole,
                                 const std::vector<UnitLayout>& local, TpSlice slice,
                                 Communicator* world, Backend& backend);

}  // namespace llmft
