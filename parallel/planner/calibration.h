// Calibration: what a job measured on its devices before training — the rate a large
// GEMM achieves and the bandwidth and latency of collectives inside a node and across
// nodes (parallel/planner/device_benchmark.h) — and the device description it refines.
// launch/calibration_cache.h keeps it between jobs.
#pragma once

#include <string>

#include "parallel/planner/device.h"

namespace llmft {

struct Calibration {
  std::string device;              // the preset the measurements refine
  double gemm_flops = 0;           // a large 16-bit GEMM's rate (f32 on CPU), extrapolated
  double gemm_half_rate_rows = 0;  // rows at which a GEMM reaches half of gemm_flops
  Link intra_node, inter_node;     // a bandwidth of 0: not measured (e.g. one node)
};

// The preset with the measured figures in place of the published ones: peak_flops and
// gemm_half_rate_rows become the measured GEMM curve (achieved_fraction then is the share
// of it a whole step achieves), and each measured link replaces the preset's.
DeviceDescription calibrated(DeviceDescription preset, const Calibration& calibration);

}  // namespace llmft
