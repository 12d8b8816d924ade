// One GPT-2 transformer block: pre-LayerNorm causal self-attention and a GELU (tanh)
// MLP, each on a residual branch.
//
//   x(N, C) -> ln1 -> qkv = ln1 @ Wqkv^T + b     (N, 3C)
//           -> att = attention(qkv)              (N, C), lse (B, H, T)
//           -> res2 = x + att @ Wo^T + b          (N, C)
//           -> ln2 -> fc = ln2 @ Wfc^T + b       (N, I)
//           -> out = res2 + gelu(fc) @ Wp^T + b  (N, C)
//
// Kept for backward (activations): ln1, its mean and rstd, qkv, att, lse, res2, ln2, its
// mean and rstd, fc, and out (the next unit's input). gelu(fc) is recomputed in backward
// and attention keeps only the per-row log-sum-exp, never a (T, T) matrix.
// Backward temporaries (workspace): one (N, max(I, 3C)) and one (N, C) buffer.
#pragma once

#include "core/allocator.h"
#include "core/backend.h"
#include "core/model_config.h"
#include "core/unit_layout.h"

namespace llmft {

UnitLayout gpt2_block_layout(const ModelConfig& config, int layer);

struct Gpt2BlockWeights {
  Tensor ln1_w, ln1_b, qkv_w, qkv_b, attn_proj_w, attn_proj_b;
  Tensor ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b;
};

// Views of a block's parameters (or gradients) in its flat unit buffer.
Gpt2BlockWeights bind_gpt2_block(const UnitLayout& layout, const Tensor& flat);

struct Gpt2BlockSaved {
  Buffer ln1, ln1_mean, ln1_rstd, qkv, att, lse, res2, ln2, ln2_mean, ln2_rstd, fc, out;
};

struct BlockShape {
  int batch;
  int seq_len;
  int64_t rows() const { return static_cast<int64_t>(batch) * seq_len; }
};

// x(N, C) is the block input; fills `saved`, whose `out` is the block output.
void gpt2_block_forward(Backend& be, Allocator& alloc, const ModelConfig& config, BlockShape s,
                        const Gpt2BlockWeights& w, Tensor x, Gpt2BlockSaved& saved);

// On entry `stream` holds d(loss)/d(out); on return it holds d(loss)/d(x).
// Parameter gradients are accumulated into `g`.
void gpt2_block_backward(Backend& be, Allocator& alloc, const ModelConfig& config, BlockShape s,
                         const Gpt2BlockWeights& w, const Gpt2BlockWeights& g, Tensor x,
                         const Gpt2BlockSaved& saved, Tensor stream);

}  // namespace llmft
