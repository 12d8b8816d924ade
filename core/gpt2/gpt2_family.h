// The GPT-2 family: token + learned position embeddings, pre-LayerNorm blocks with
// causal multi-head self-attention and a GELU (tanh) MLP, final LayerNorm, LM head tied
// to the token embedding. Hugging Face names; linear weights stored (out, in) and
// transposed to GPT-2's Conv1D (in, out) in Hugging Face files.
//
// One block, N = batch x seq rows:
//   x(N, C) -> ln1 -> qkv = ln1 @ Wqkv^T + b     (N, 3C)
//           -> att = attention(qkv)              (N, C), lse (B, H, T)
//           -> res2 = x + att @ Wo^T + b          (N, C)
//           -> ln2 -> fc = ln2 @ Wfc^T + b       (N, I)
//           -> out = res2 + gelu(fc) @ Wp^T + b  (N, C)
// Kept for backward (activations): ln1 (and its mean, rstd), qkv, att, lse, res2, ln2
// (and its mean, rstd), fc, and out. gelu(fc) is recomputed in backward; attention keeps
// only the per-row log-sum-exp, never a (T, T) matrix.
// Temporaries (workspace): forward gelu(fc) (N, I); backward one (N, max(I, 3C)) and one
// (N, C) buffer.
#pragma once

#include "core/decoder/family.h"

namespace llmft {

class Gpt2Family : public Family {
 public:
  NormKind norm_kind() const override { return NormKind::layernorm; }
  UnitLayout embedding_layout(const ModelConfig& config, TpSlice tp,
                              int64_t vocab_row_multiple) const override;
  UnitLayout block_layout(const ModelConfig& config, int layer, TpSlice tp) const override;
  UnitLayout head_layout(const ModelConfig& config, TpSlice tp,
                         int64_t vocab_row_multiple) const override;
  void block_forward(const BlockContext& ctx, const UnitLayout& layout, Tensor params, Tensor x,
                     BlockSaved& saved) const override;
  void block_backward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                      Tensor grads, Tensor x, const BlockSaved& saved,
                      Tensor stream) const override;
};

}  // namespace llmft
