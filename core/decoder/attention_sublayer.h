// The attention half of a pre-norm transformer block, shared by the families:
//   res = x + proj(attention(rotate?(qkv(norm(x)))))
// with causal (grouped-query) attention over the packed qkv projection. Under tensor
// parallelism qkv is column-parallel (this rank's heads) and proj row-parallel; under
// sequence parallelism x, the norm and res hold this rank's stream rows, the norm's output
// is gathered for qkv (again in backward) and d res for proj's backward.
// Kept for backward
// (activations): the norm's output and statistics, qkv (after rotation), the attention
// output and its per-row log-sum-exp, and res (the MLP half's input).
#pragma once

#include "core/decoder/block.h"
#include "core/decoder/norm.h"

namespace llmft {

// A family's attention weights; biases (and the norm's bias) are undefined where the
// family has none.
struct AttentionWeights {
  Tensor norm_w, norm_b, qkv_w, qkv_b, proj_w, proj_b;
};

struct AttentionSpec {
  NormKind norm;
  bool rotary;            // rotary position embedding on q and k
  const char* norm_name;  // for allocation names, e.g. "ln_1"
};

struct AttentionSaved {
  NormSaved norm;
  Buffer qkv, att, lse, res;
};

// Returns res (stream rows, C): the output projection's, to which the caller adds x (the
// residual) with the next norm (residual_norm_forward, one pass where the backend fuses).
Tensor attention_sublayer_forward(const BlockContext& ctx, const AttentionSpec& spec,
                                  const AttentionWeights& w, Tensor x, AttentionSaved& saved);

// On entry `stream` holds d(loss)/d(res); on return d(loss)/d(x). Gradients accumulate
// into g. narrow (N, C) and wide (at least N x ctx.qkv_width()) are scratch the caller owns;
// stream and x hold the stream rows.
void attention_sublayer_backward(const BlockContext& ctx, const AttentionSpec& spec,
                                 const AttentionWeights& w, const AttentionWeights& g, Tensor x,
                                 const AttentionSaved& saved, Tensor stream, Tensor narrow,
                                 Tensor wide);

}  // namespace llmft
