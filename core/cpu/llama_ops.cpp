// LLaMA-family CPU kernels: RMSNorm, rotary position embedding (Hugging Face's
// rotate-half layout) and the SwiGLU activation.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/vector_math.h"
#include "core/element_math.h"

namespace llmft::cpu {

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t N,
                     int64_t C, float eps) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float sum_sq = 0.0f;
    for (int64_t c = 0; c < C; ++c) sum_sq += x[c] * x[c];
    const float r = 1.0f / std::sqrt(sum_sq / static_cast<float>(C) + eps);
    float* y = out + n * C;
    for (int64_t c = 0; c < C; ++c) y[c] = weight[c] * (x[c] * r);
    rstd[n] = r;
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t N, int64_t C) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* dy = dout + n * C;
    const float* x = inp + n * C;
    const float r = rstd[n];
    float dot = 0.0f;  // sum of (weight * dy) * x
    for (int64_t c = 0; c < C; ++c) dot += weight[c] * dy[c] * x[c];
    const float coeff = r * r * r * dot / static_cast<float>(C);
    float* dx = dinp + n * C;
    for (int64_t c = 0; c < C; ++c) dx[c] += r * weight[c] * dy[c] - coeff * x[c];
  }
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < C; start += kBlock) {
    const int64_t end = start + kBlock < C ? start + kBlock : C;
    for (int64_t n = 0; n < N; ++n) {
      const float* dy = dout + n * C;
      const float* x = inp + n * C;
      for (int64_t c = start; c < end; ++c) dweight[c] += dy[c] * x[c] * rstd[n];
    }
  }
}

namespace {

// Rotates the first n_rot_heads heads (q then k) of every row of qkv by +angle (or
// -angle when inverse, which is the transpose used by backward).
void rope_rotate(float* qkv, const int32_t* positions, int64_t N, int64_t H, int64_t KVH, int64_t D,
                 const float* inv_freq, bool inverse) {
  const int64_t row = (H + 2 * KVH) * D, half = D / 2, rotated_heads = H + KVH;
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float pos = static_cast<float>(positions[n]);
    float* base = qkv + n * row;
    for (int64_t i = 0; i < half; ++i) {
      const float angle = pos * inv_freq[i];
      const float cos_a = std::cos(angle);
      const float sin_a = inverse ? -std::sin(angle) : std::sin(angle);
      for (int64_t h = 0; h < rotated_heads; ++h) {
        float* v = base + h * D;
        element::rotate(v[i], v[i + half], cos_a, sin_a);
      }
    }
  }
}

}  // namespace

void rope_forward(float* qkv, const int32_t* positions, int64_t N, int64_t H, int64_t KVH,
                  int64_t D, const float* inv_freq) {
  rope_rotate(qkv, positions, N, H, KVH, D, inv_freq, false);
}

void rope_backward(float* dqkv, const int32_t* positions, int64_t N, int64_t H, int64_t KVH,
                   int64_t D, const float* inv_freq) {
  rope_rotate(dqkv, positions, N, H, KVH, D, inv_freq, true);
}

void swiglu_forward(float* out, const float* gate_up, int64_t N, int64_t I) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* g = gate_up + n * 2 * I;
    const float* u = g + I;
    float* y = out + n * I;
    for (int64_t i = 0; i < I; ++i) {
      y[i] = element::swiglu(g[i], u[i], 1.0f / (1.0f + fast_exp(-g[i])));
    }
  }
}

void swiglu_backward(float* dgate_up, const float* gate_up, const float* dout, int64_t N,
                     int64_t I) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* g = gate_up + n * 2 * I;
    const float* u = g + I;
    const float* dy = dout + n * I;
    float* dg = dgate_up + n * 2 * I;
    float* du = dg + I;
    for (int64_t i = 0; i < I; ++i) {
      const float s = 1.0f / (1.0f + fast_exp(-g[i]));
      dg[i] = element::swiglu_dgate(g[i], u[i], s, dy[i]);
      du[i] = element::swiglu_dup(g[i], s, dy[i]);
    }
  }
}

}  // namespace llmft::cpu
