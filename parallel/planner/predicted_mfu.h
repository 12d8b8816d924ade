// The MFU a plan predicts for a layout: the model FLOPs of a step (parallel/flops.h, the
// same definition the step lines measure) over its predicted step time and the devices'
// peak (the preset's dense 16-bit peak, or on CPU the calibrated GEMM rate), a phrase
// saying where that step time comes from, so that a reader can tell a measured basis from
// a preset's assumption, and, where the GPU kernel model priced the step, where its time
// goes kernel class by kernel class: which kernels hold the MFU back.
#pragma once

#include <string>

#include "parallel/planner/planner.h"

namespace llmft {

// 0 when the candidate was not evaluated or the device has no peak.
double predicted_mfu(const PlanRequest& request, const Candidate& candidate);

// "the rates this job's calibration measured", "the h200 preset's per-kernel GPU time
// model ...", or "the v100-16g preset, which prices ... at 50% of its peak".
std::string predicted_mfu_basis(const PlanRequest& request);

// The candidate's step by class, longest first, one line each: seconds, share of the step,
// and the rate reached (products and attention in TFLOP/s and share of the peak; the
// memory-bound classes at the HBM bandwidth), then kernel gaps, exposed communication and
// the offloaded optimizer's host time. "" unless the GPU kernel model priced the step.
std::string predicted_mfu_breakdown(const PlanRequest& request, const Candidate& candidate);

}  // namespace llmft
