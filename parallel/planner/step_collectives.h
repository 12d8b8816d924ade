// The collectives one rank takes part in during a training step of a layout, as the
// Engine and the tensor-parallel layers issue them: what each moves, over which group,
// how often, and which compute can hide it. Activations and transient gradients move in
// the compute dtype (core/compute_dtype.h), stored gradients and weights in the stored one.
//
// Tensor parallelism (Megatron-LM): per block 2 all-reduces forward (attention and MLP
// outputs) and 2 backward (their input gradients) of micro_batch x seq x hidden
// activations, again for every recomputed forward (checkpointing) and every extra
// backward (a fused optimizer's norm pass); the vocab-parallel embedding's forward
// all-reduce, the head's input-gradient all-reduce, and the vocab-parallel
// cross-entropy's 2 small reductions of f32 statistics (row maxima; exp-sums with target
// logits). None overlaps. (The Engine's scalar sums, a few bytes, are left out.) Under
// sequence parallelism each of those all-reduces of the stream is a reduce-scatter into it
// and an all-gather of every row out of it (the same bytes), backward gathers each
// column-parallel input again, and the norms' weight gradients are all-reduced.
//
// Data parallelism, per unit: DDP all-reduces stored gradients once per step behind the
// last micro-batch's backward; ZeRO-1 reduce-scatters them after backward; ZeRO-2/3
// reduce-scatter each micro-batch's transient gradient as it completes (the Engine waits
// for it); ZeRO-1/2 all-gather the updated weights; ZeRO-3 all-gathers weights before
// each forward and backward, one unit ahead. LOMO/AdaLomo reduce each transient gradient
// before updating (all-reduce, or LOMO from ZeRO-2 on reduce-scatter), in both backward
// passes.
#pragma once

#include <vector>

#include "parallel/planner/collective_cost.h"
#include "parallel/planner/layout.h"

namespace llmft {

enum class CommGroup { tensor_parallel, data_parallel };

// The compute a collective runs behind.
enum class Overlap {
  none,               // the step waits for it
  backward,           // issued unit by unit during the last micro-batch's backward
  forward_prefetch,   // the next unit's gather during this unit's forward
  backward_prefetch,  // the previous unit's gather during this unit's backward
};

struct CollectiveCall {
  const char* what;  // e.g. "gradient all-reduce"
  Collective op;
  CommGroup group;
  double bytes;  // the full buffer of one occurrence
  int pieces;    // separate collectives it is issued as (one per unit, say)
  int count;     // occurrences per optimizer step
  Overlap overlap;
};

// Backward passes per micro-batch: 2 when a fused optimizer (LOMO, AdaLomo) must know the
// global gradient norm — clipping, or fp16's overflow check — before any update.
int backward_passes(const Workload& workload);

// REQUIRES: a fused optimizer has layout.grad_accum == 1
// `rule`: how the devices' backend computes (core/compute_dtype.h), which sets the dtype
// of activations and transient gradients.
std::vector<CollectiveCall> step_collectives(const Workload& workload, const Layout& layout,
                                             ComputeRule rule);

}  // namespace llmft
