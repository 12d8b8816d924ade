// The dtype a backend computes a training step in, given the dtype the run stores weights
// and gradients in (--dtype): the dtype of the weights its kernels read, of the
// activations, their gradients and the logits, and of the weight gradients a unit's
// backward writes. Model and parallel code allocate by it, so the memory model's dry run
// (on the counting device, which takes the rule of the backend it stands for) allocates
// exactly what that backend would.
//  - ComputeRule::f32 (the CPU backend, whose kernels take f32): a unit's 16-bit weights
//    are converted to an f32 working copy while it runs; activations are f32; a unit's
//    backward writes f32 weight gradients, added once into 16-bit stored ones.
//  - ComputeRule::stored (GPUs, whose tensor cores read bf16 and fp16 and accumulate in
//    f32): everything stays in the stored dtype; nothing is converted.
// Statistics (the norms' rstd and mean, attention's log-sum-exp, the loss's per-row values
// and its sum) are f32 under both rules.
#pragma once

#include "core/dtype.h"

namespace llmft {

enum class ComputeRule { f32, stored };

DType compute_dtype(ComputeRule rule, DType stored);

}  // namespace llmft
