// Elementwise CPU kernels: GELU (tanh approximation).
#include <algorithm>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/vector_math.h"
#include "core/element_math.h"

namespace llmft::cpu {

void gelu_forward(float* out, const float* inp, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float x = inp[i];
    out[i] = element::gelu(x, fast_tanh(element::gelu_tanh_arg(x)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float x = inp[i];
    dinp[i] = element::gelu_derivative(x, fast_tanh(element::gelu_tanh_arg(x))) * dout[i];
  }
}

}  // namespace llmft::cpu
