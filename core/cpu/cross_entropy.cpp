// Fused softmax + cross-entropy + its gradient on CPU: one pass over the logits that
// leaves d(loss)/d(logits) in their place, so no second (N, V) buffer exists.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/vector_math.h"

namespace llmft::cpu {

double cross_entropy_fused(float* logits, const int32_t* targets, int64_t N, int64_t V,
                           float grad_scale) {
  double loss_sum = 0.0;
#pragma omp parallel for reduction(+ : loss_sum) schedule(static)
  for (int64_t n = 0; n < N; ++n) {
    float* row = logits + n * V;
    const int32_t target = targets[n];
    if (target < 0) {
      for (int64_t v = 0; v < V; ++v) row[v] = 0.0f;
      continue;
    }
    float row_max = row[0];
#pragma omp simd reduction(max : row_max)
    for (int64_t v = 1; v < V; ++v) row_max = row[v] > row_max ? row[v] : row_max;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < V; ++v) {
      row[v] = fast_exp(row[v] - row_max);
      sum += row[v];
    }
    const float target_prob = row[target] / sum;
    loss_sum += -std::log(static_cast<double>(target_prob));
    const float scale = grad_scale / sum;
    for (int64_t v = 0; v < V; ++v) row[v] *= scale;
    row[target] -= grad_scale;
  }
  return loss_sum;
}

}  // namespace llmft::cpu
