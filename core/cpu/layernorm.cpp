// LayerNorm on CPU; statistics in f32, as PyTorch computes them.
#include <cmath>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int64_t N, int64_t C, float eps) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float m = 0.0f;
    for (int64_t c = 0; c < C; ++c) m += x[c];
    m /= static_cast<float>(C);
    float var = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      float d = x[c] - m;
      var += d * d;
    }
    var /= static_cast<float>(C);
    float s = 1.0f / std::sqrt(var + eps);
    float* y = out + n * C;
    for (int64_t c = 0; c < C; ++c) y[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        int64_t N, int64_t C) {
  // Input gradients: rows are independent.
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* dy = dout + n * C;
    const float* x = inp + n * C;
    float m = mean[n], s = rstd[n];
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      float norm = (x[c] - m) * s;
      float dnorm = weight[c] * dy[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= static_cast<float>(C);
    dnorm_norm_mean /= static_cast<float>(C);
    float* dx = dinp + n * C;
    for (int64_t c = 0; c < C; ++c) {
      float norm = (x[c] - m) * s;
      float dnorm = weight[c] * dy[c];
      dx[c] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
  }
  // Parameter gradients: threads own column blocks.
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < C; start += kBlock) {
    int64_t end = start + kBlock < C ? start + kBlock : C;
    for (int64_t n = 0; n < N; ++n) {
      const float* dy = dout + n * C;
      const float* x = inp + n * C;
      float m = mean[n], s = rstd[n];
      for (int64_t c = start; c < end; ++c) {
        dweight[c] += (x[c] - m) * s * dy[c];
        dbias[c] += dy[c];
      }
    }
  }
}

}  // namespace llmft::cpu
