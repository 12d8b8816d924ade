// The planner's result as JSON, for scripts (`llmft plan --json`). The contract:
//
//   {"model": {"name", "family", "params", ...},
//    "cluster": {"device", "gpus", "gpus_per_node", "memory_bytes", "memory_margin",
//                "usable_bytes", "overhead_bytes", "overhead_measured",
//                "communicator_bytes" (NCCL's per device, 0 for one rank),
//                "communicator_measured", ...},
//    "candidates": [candidate, ...],   // ranked as PlanResult::candidates
//    "chosen": candidate or null}
//
// A candidate: "dp", "tp", "zero", "optimizer", "dtype", "activation_checkpointing",
// "checkpointed_blocks",
// "micro_batch", "grad_accum", "seq_len", "fits", "predicted_step_s", "time" (its
// compute_s, comm_s, exposed_comm_s, total_s), "memory" (bytes on the worst rank:
// "params", "master_params", "grads", "optimizer_state", "activations", "workspace"
// (with the engine's few scalars), "comm_buffers" (with the communicator bytes),
// "overhead", "peak"), "peak_phase",
// and "reason" when it does not fit. A candidate rejected before any prediction has
// null "memory" and "predicted_step_s" and no "time" or "peak_phase".
#pragma once

#include "io/json.h"
#include "parallel/planner/planner.h"

namespace llmft {

io::Json plan_json(const PlanRequest& request, const PlanResult& result);

}  // namespace llmft
