// The MFU a plan predicts for a layout: the model FLOPs of a step (parallel/flops.h, the
// same definition the step lines measure) over its predicted step time and the devices'
// peak (the preset's dense 16-bit peak, or on CPU the calibrated GEMM rate), and a
// phrase saying where that step time comes from, so that a reader can tell a measured
// basis from a preset's assumption.
#pragma once

#include <string>

#include "parallel/planner/planner.h"

namespace llmft {

// 0 when the candidate was not evaluated or the device has no peak.
double predicted_mfu(const PlanRequest& request, const Candidate& candidate);

// "the calibrated rates of this job's devices", or "the h200 preset: ... at 50% of
// peak" for an uncalibrated plan.
std::string predicted_mfu_basis(const PlanRequest& request);

}  // namespace llmft
