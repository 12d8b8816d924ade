// Reducing one host value over a group: the value goes through a one-float device tensor
// the caller provides (device memory is where collectives run), and comes back reduced.
// Used for step-wide scalars (token counts, loss sums, gradient norms, benchmark times).
#pragma once

#include "comm/communicator.h"
#include "core/backend.h"

namespace llmft {

// The sum (or maximum) of `value` over `group`, in f32. `scratch` holds one f32.
double reduce_host_value(Communicator& group, Backend& backend, Tensor scratch, double value,
                         ReduceOp op);

}  // namespace llmft
