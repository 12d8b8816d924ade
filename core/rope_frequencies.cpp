// The rotary embedding's inverse frequencies, operation by operation in transformers'
// float32 order: torch evaluates `scalar / tensor` as reciprocal(tensor) * scalar, and a
// Python float meeting a float32 tensor is rounded to float32 first.
#include "core/rope_frequencies.h"

#include <cmath>

#include "core/error.h"

namespace llmft {

namespace {

// 1 / theta^(2i / head_dim): the exponent from an int64 arange divided in float32, the
// power in float32 (transformers' default frequencies).
float unscaled_inv_freq(float theta, int i, int head_dim) {
  return 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
}

// _compute_llama3_parameters: long wavelengths (beyond the pretraining context /
// low_freq_factor) divide by factor, short ones (below context / high_freq_factor) stay,
// and the band between blends the two.
float llama3_scaled(float inv_freq, const RopeScaling& s) {
  const auto f32 = [](double x) { return static_cast<float>(x); };
  const float two_pi = f32(2.0 * M_PI);
  const float context = f32(static_cast<double>(s.original_max_positions));
  const float low_freq_wavelen = f32(s.original_max_positions / s.low_freq_factor);
  const float high_freq_wavelen = f32(s.original_max_positions / s.high_freq_factor);
  const float factor = f32(s.factor);
  const float wavelen = (1.0f / inv_freq) * two_pi;
  const float scaled = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
  if (wavelen < high_freq_wavelen || wavelen > low_freq_wavelen) return scaled;
  const float smooth = ((1.0f / wavelen) * context - f32(s.low_freq_factor)) /
                       f32(s.high_freq_factor - s.low_freq_factor);
  return (1.0f - smooth) * scaled / factor + smooth * scaled;
}

}  // namespace

RopeFrequencies rope_frequencies(float theta, const RopeScaling& scaling, int head_dim) {
  LLMFT_REQUIRE(head_dim > 0 && head_dim % 2 == 0 && head_dim / 2 <= kMaxRopePairs,
                "rotary embedding: head size " << head_dim << " must be even and at most "
                                               << 2 * kMaxRopePairs);
  RopeFrequencies f;
  f.pairs = head_dim / 2;
  for (int i = 0; i < f.pairs; ++i) {
    const float inv_freq = unscaled_inv_freq(theta, i, head_dim);
    switch (scaling.type) {
      case RopeType::unscaled:
        f.inv_freq[i] = inv_freq;
        break;
      case RopeType::linear:  // _compute_linear_scaling_rope_parameters
        f.inv_freq[i] = inv_freq / static_cast<float>(scaling.factor);
        break;
      case RopeType::llama3:
        f.inv_freq[i] = llama3_scaled(inv_freq, scaling);
        break;
    }
  }
  return f;
}

int64_t rope_head_size(int64_t qkv_width, int n_head, int n_kv_head, const RopeFrequencies& freqs) {
  const int64_t heads = n_head + 2 * static_cast<int64_t>(n_kv_head);
  const int64_t D = qkv_width / heads;
  LLMFT_REQUIRE(heads > 0 && D * heads == qkv_width && D == 2 * freqs.pairs,
                "rope: a qkv row of " << qkv_width << " values for " << n_head << " + 2 x "
                                      << n_kv_head << " heads does not hold heads of "
                                      << 2 * freqs.pairs
                                      << " values; pass the frequencies of the model's head size");
  return D;
}

}  // namespace llmft
