// Calibration: what a job measured on its devices before training — the rate a large
// GEMM achieves, what other kernels cost, and the bandwidth and latency of each collective
// a step runs (all-reduce, reduce-scatter, all-gather) inside a node and across nodes
// (parallel/planner/device_benchmark.h) — and the device description it refines.
// launch/calibration_cache.h keeps it between jobs.
#pragma once

#include <string>

#include "parallel/planner/device.h"

namespace llmft {

struct Calibration {
  std::string device;              // the preset the measurements refine
  double gemm_flops = 0;           // a large 16-bit GEMM's rate (f32 on CPU), extrapolated
  double gemm_half_rate_rows = 0;  // rows at which a GEMM reaches half of gemm_flops
  Link intra_node, inter_node;     // each collective's rate; unknown: not measured (one node)
  // Kernels other than products (device.h): bytes/s streaming from memory, seconds per
  // call; 0: not measured.
  double memory_bandwidth = 0, kernel_call_s = 0;
  // The rows (and width) of the square GEMM behind gemm_flops: the shape a later job times
  // again, in a fraction of a second, to see whether the rate still holds (the probe,
  // device_benchmark.h); 0: not measured.
  double gemm_size = 0;
  // When and under what load the figures were measured (launch/calibration_cache.h records
  // them): UTC "YYYY-MM-DDTHH:MM:SSZ", the 1-minute load average (-1: unknown) and the
  // online CPUs at the time.
  std::string measured_at{};
  double load_average = -1;
  int online_cpus = 0;
};

// The preset with the measured figures in place of the published ones: peak_flops and
// gemm_half_rate_rows become the measured GEMM curve, each measured link replaces the
// preset's, and measured kernel costs let the time model price every kernel (instead of
// the preset's achieved_fraction).
DeviceDescription calibrated(DeviceDescription preset, const Calibration& calibration);

}  // namespace llmft
