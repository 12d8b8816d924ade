// The startup benchmarks behind --auto-plan's time model: the GEMM rate each rank
// achieves on its device (the slowest rank's, since ranks sharing a machine compete for
// it in training too) and the bandwidth and latency of all-reduces within a node and,
// when the job spans nodes, across them. A few seconds at most; the result is cached
// (calibration.h) so that later jobs on the same machines skip it.
#pragma once

#include <string>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "parallel/planner/calibration.h"

namespace llmft {

// Collective over `world` (null: a one-rank job, no links measured). `node` holds the
// ranks on this rank's machine.
Calibration measure_devices(Backend& backend, Allocator& allocator, Communicator* world,
                            Communicator* node, const std::string& device_name);

}  // namespace llmft
