// RopeFrequencies: the head_dim / 2 inverse frequencies of the rotary position embedding,
// computed once on the host from rope_theta and the rope scaling exactly as transformers'
// modeling_rope_utils computes them in float32. The rope kernels turn pair i of a head at
// position p by the angle p * inv_freq[i] (a float32 product, as transformers forms it).
#pragma once

#include "core/model_config.h"

namespace llmft {

// Pairs of the widest head the rope kernels rotate (head size 512). The table travels by
// value into the CUDA kernel's parameters, so its size is fixed.
constexpr int kMaxRopePairs = 256;

struct RopeFrequencies {
  int pairs = 0;  // head_dim / 2
  float inv_freq[kMaxRopePairs] = {};
};

// REQUIRES: head_dim even and at most 2 * kMaxRopePairs, the scaling's parameters valid
// (validate() checks both for a config).
RopeFrequencies rope_frequencies(float theta, const RopeScaling& scaling, int head_dim);

// The head size D of a packed qkv row of width (H + 2 KVH) D, checked against the table:
// backends call it before rotating.
int64_t rope_head_size(int64_t qkv_width, int n_head, int n_kv_head, const RopeFrequencies& freqs);

// The frequencies of a LLaMA-family config.
inline RopeFrequencies rope_frequencies(const ModelConfig& config) {
  return rope_frequencies(config.rope_theta, config.rope_scaling, config.head_dim());
}

}  // namespace llmft
