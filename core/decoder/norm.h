// The two normalisations of the decoder families behind one call: LayerNorm (GPT-2:
// weight and bias, keeps mean and rstd) and RMSNorm (LLaMA: weight only, keeps rstd).
// Kept for backward: the normalised output (the next linear layer's input) and the
// per-row statistics, all under `activations`.
#pragma once

#include "core/decoder/block.h"

namespace llmft {

enum class NormKind { layernorm, rmsnorm };

struct NormSaved {
  Buffer out, mean, rstd;  // mean only for LayerNorm
};

// bias is undefined for RMSNorm.
Tensor norm_forward(const BlockContext& ctx, NormKind kind, Tensor weight, Tensor bias, Tensor x,
                    NormSaved& saved, const std::string& name);
// residual += x (the residual stream's add), then norm_forward of the new residual: one
// kernel where the backend fuses them (Backend::residual_layernorm_forward).
Tensor residual_norm_forward(const BlockContext& ctx, NormKind kind, Tensor weight, Tensor bias,
                             Tensor residual, Tensor x, NormSaved& saved, const std::string& name);
// dx += d/dx; dweight, dbias += ...
void norm_backward(const BlockContext& ctx, NormKind kind, Tensor dx, Tensor dweight, Tensor dbias,
                   Tensor dout, Tensor x, Tensor weight, const NormSaved& saved);

}  // namespace llmft
