// The planner: given a workload, a world of identical devices and the layout choices the
// user fixed, it predicts every layout's worst-rank memory (rank_memory.h) and step
// time (step_time.h) and picks the fastest layout that fits.
//
// Layouts searched: every dp x tp factorisation of the world (tp from valid_tp_sizes),
// ZeRO stages 0-3 (only 0 when dp is 1: there is nothing to shard), every micro-batch
// that divides the global batch's share of a data-parallel rank (fused optimizers only
// the one without accumulation, which they cannot do), checkpointing off and on, and for
// SGD and AdamW the optimizer on the device and offloaded to host memory, and with tp > 1
// sequence parallelism off and on (where tp divides a micro-batch's rows). A layout fits
// when its peak per rank is at most the device memory x (1 - margin) and its host pool at
// most the host memory per device x (1 - margin). Among those that fit the fastest wins;
// ties go to the one needing less memory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parallel/planner/device.h"
#include "parallel/planner/layout.h"
#include "parallel/planner/rank_memory.h"
#include "parallel/planner/step_time.h"

namespace llmft {

// The layout choices the user fixed; unset ones are searched.
struct LayoutConstraints {
  std::optional<int> tp, zero_stage, micro_batch;
  // Checkpointed blocks; a count past the model's blocks means all of them.
  std::optional<int> checkpointed_blocks;
  std::optional<bool> offload_optimizer;
  std::optional<bool> sequence_parallel;  // only ever on with tp > 1
};

struct PlanRequest {
  Workload workload;
  int world = 1;  // devices of the job
  DeviceDescription device;
  double memory_margin = 0.05;
  LayoutConstraints constraints;
};

struct Candidate {
  Layout layout;
  bool evaluated = false;  // false: rejected before any prediction (see reason)
  RankMemory memory;
  StepTime time;
  bool fits = false;
  std::string reason;  // why a candidate that does not fit was rejected
};

struct PlanResult {
  size_t usable_bytes = 0;       // per device, after the margin
  size_t usable_host_bytes = 0;  // host memory per device, after the margin
  // The fitting candidates, fastest first; then the rejected ones, smallest peak first,
  // those never evaluated last.
  std::vector<Candidate> candidates;

  // The fastest fitting candidate, or nullptr when none fits.
  const Candidate* chosen() const;
};

// Throws llmft::Error when the request cannot be searched at all (a --tp that does not
// divide the world or the model, a --zero outside 0-3, a margin outside [0, 1)).
PlanResult plan_layouts(const PlanRequest& request);

// The chosen candidate; when none fits, throws llmft::Error with the smallest
// candidate's breakdown and what to try instead.
const Candidate& chosen_layout(const PlanRequest& request, const PlanResult& result);

}  // namespace llmft
