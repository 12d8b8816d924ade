// Elementwise CPU kernels: GELU (tanh approximation).
#include <algorithm>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/vector_math.h"

namespace llmft::cpu {

namespace {
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
}

void gelu_forward(float* out, const float* inp, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float x = inp[i];
    float cube = 0.044715f * x * x * x;
    out[i] = 0.5f * x * (1.0f + fast_tanh(kGeluScale * (x + cube)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float x = inp[i];
    float cube = 0.044715f * x * x * x;
    float tanh_arg = kGeluScale * (x + cube);
    float tanh_out = fast_tanh(tanh_arg);
    float sech_sq = 1.0f - tanh_out * tanh_out;
    float grad = 0.5f * (1.0f + tanh_out) +
                 x * 0.5f * sech_sq * kGeluScale * (1.0f + 3.0f * 0.044715f * x * x);
    dinp[i] = grad * dout[i];
  }
}

}  // namespace llmft::cpu
