// The work of one optimizer step of a layout, tallied by a dry run of its first rank
// (parallel/dry_run.h): what one micro-batch's forward and backward do (with a fused
// optimizer, its updates and norm pass too), and what the step does once besides (the
// optimizer's update, the gradient norm and clipping, ZeRO's gathers of updated weights).
// A step runs grad_accum micro-batches and the rest once. The tally of a steady step is
// taken (the first step also creates the optimizer's state). With the optimizer offloaded,
// the host pool's kernels are tallied apart the same way.
#pragma once

#include "core/compute_dtype.h"
#include "core/counting/work_tally.h"
#include "parallel/planner/layout.h"

namespace llmft {

struct StepWork {
  WorkTally micro_batch;
  WorkTally once;
  WorkTally host_micro_batch, host_once;  // an offloaded optimizer's host kernels
};

StepWork step_work(const Workload& workload, const Layout& layout, ComputeRule compute);

}  // namespace llmft
