// The LLaMA family: token embedding, pre-RMSNorm blocks with rotary position embedding
// (Hugging Face's rotate-half layout), grouped-query causal attention and a SwiGLU MLP,
// no biases, final RMSNorm, and an LM head that is tied or untied per the config.
// Hugging Face names and layouts ((out, in) linear weights): checkpoints move between
// transformers and llmft with no permutation.
//
// One block, N = batch x seq rows, W = (H + 2 KVH) D:
//   x(N, C) -> n1 = rmsnorm(x) -> qkv = n1 @ [Wq; Wk; Wv]^T  (N, W), rope on q and k
//           -> att = attention(qkv)                          (N, C), lse (B, H, T)
//           -> res2 = x + att @ Wo^T                          (N, C)
//           -> n2 = rmsnorm(res2) -> gu = n2 @ [Wg; Wu]^T     (N, 2I)
//           -> out = res2 + (silu(g) * u) @ Wd^T              (N, C)
// q_proj, k_proj, v_proj are adjacent in the unit and form one fused (W, C) weight, as
// do gate_proj and up_proj (2I, C).
// Kept for backward (activations): n1 (and its rstd), qkv after rotation, att, lse, res2,
// n2 (and its rstd), gu, and out. silu(g) * u is recomputed in backward.
// Temporaries (workspace): forward (N, I); backward (N, I), (N, max(2I, W)) and (N, C).
#pragma once

#include "core/decoder/family.h"

namespace llmft {

class LlamaFamily : public Family {
 public:
  NormKind norm_kind() const override { return NormKind::rmsnorm; }
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
