// Calibration: what a job measured on its devices before training — the rate a large
// GEMM achieves and the bandwidth and latency of collectives inside a node and across
// nodes (parallel/planner/device_benchmark.h) — and the device description it refines.
// launch/calibration_cache.h keeps it between jobs.
#pragma once

#include <string>

#include "parallel/planner/device.h"

namespace llmft {

struct Calibration {
  std::string device;           // the preset the measurements refine
  double gemm_flops = 0;        // achieved by a large 16-bit GEMM (f32 on CPU)
  Link intra_node, inter_node;  // a bandwidth of 0: not measured (e.g. one node)
};

// The preset with the measured figures in place of the published ones: peak_flops
// becomes the GEMM rate (achieved_fraction then is the share of it a whole step
// achieves), and each measured link replaces the preset's bandwidth and latency.
DeviceDescription calibrated(DeviceDescription preset, const Calibration& calibration);

}  // namespace llmft
