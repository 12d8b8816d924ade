// Gradient accumulation's dtype (--grad-accum-dtype): what an accumulating optimizer's
// (SGD, AdamW) stored gradient sums a step's micro-batches in, and for tied weights their
// uses. fp32 keeps an f32 sum for bf16/fp16 weights (Megatron's main gradient, DeepSpeed's
// default), so the optimizer sees a gradient rounded once per addition in f32; stored sums
// in the weights' own dtype, rounding every micro-batch's addition to 8 (bf16) or 11
// (fp16) significant bits, at half the gradients' memory. With f32 weights both are the
// same; LOMO and AdaLomo keep no accumulated gradient, so it does not apply to them; an
// offloaded optimizer (parallel/optimizer_offload.h) sums on the host in f32 either way.
// Where the backend computes in the weights' dtype (GPUs), backward still adds each
// product straight into the f32 sum (the weight-gradient GEMM writes f32:
// parallel/working_copies.h).
#pragma once

#include <string>

#include "core/dtype.h"

namespace llmft {

enum class GradAccumDtype { fp32, stored };

// Parses "fp32" and "stored"; other values are an Error naming the option and both values.
GradAccumDtype parse_grad_accum_dtype(const std::string& name);
const char* grad_accum_dtype_name(GradAccumDtype accum);
// The dtype of the stored gradient sums of weights stored as `weights`.
DType accumulated_grad_dtype(GradAccumDtype accum, DType weights);

}  // namespace llmft
