// Plan agreement: what makes every rank of an --auto-plan job plan from the same figures and
// train the same layout. Ranks differ in what they measure for themselves (a GPU's free
// memory, the runtime's and communicators' overheads, a node's RAM and ranks); each rank's
// planner must see the same device, and the job trains rank 0's choice, since ranks that
// trained different layouts would pair collectives that do not match.
#pragma once

#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "parallel/planner/device.h"
#include "parallel/planner/layout.h"

namespace llmft {

// Rank 0's `values` on every rank of `world` (the same count on every rank). Collective.
void broadcast_floats(Backend& backend, Allocator& allocator, Communicator& world,
                      std::vector<float>& values);

// The device every rank plans for: the smallest memory any rank has left beside the largest
// fixed and communicator overheads (each in whole MiB, which the f32 a host value travels
// in holds exactly; rounded towards less memory), the smallest host memory, FLOP/s and
// devices per node of any rank. The device itself without `world`. Collective.
DeviceDescription agreed_device(Backend& backend, Allocator& allocator, Communicator* world,
                                DeviceDescription device);

// Rank 0's `layout` on every rank of `world` (itself without one). Collective.
Layout lead_layout(Backend& backend, Allocator& allocator, Communicator* world, Layout layout);

}  // namespace llmft
