// Vocabulary-parallel softmax + cross-entropy + its gradient on CPU, in three passes
// around the two reductions over the ranks holding the vocabulary's slices. The exps
// and then the gradient are written over the logits, so no second (N, V) buffer exists.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/ordered_reduce.h"
#include "core/cpu/vector_math.h"

namespace llmft::cpu {

void cross_entropy_max(float* stats, const float* logits, int64_t N, int64_t V, int64_t valid) {
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < N; ++n) {
    const float* row = logits + n * V;
    float row_max = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : row_max)
    for (int64_t v = 0; v < valid; ++v) row_max = row[v] > row_max ? row[v] : row_max;
    stats[n] = row_max;
  }
}

void cross_entropy_sums(float* stats, float* logits, const int32_t* targets, int64_t N, int64_t V,
                        int64_t valid, int64_t vocab_start) {
  float* sums = stats + N;
  float* target_logits = stats + 2 * N;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < N; ++n) {
    float* row = logits + n * V;
    const int64_t target = static_cast<int64_t>(targets[n]) - vocab_start;
    target_logits[n] = target >= 0 && target < valid ? row[target] : 0.0f;
    const float row_max = stats[n];
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < valid; ++v) {
      row[v] = fast_exp(row[v] - row_max);
      sum += row[v];
    }
    std::fill(row + valid, row + V, 0.0f);
    sums[n] = sum;
  }
}

double cross_entropy_finish(float* logits, const float* stats, const int32_t* targets, int64_t N,
                            int64_t V, int64_t vocab_start, float grad_scale) {
  const float* maxima = stats;
  const float* sums = stats + N;
  const float* target_logits = stats + 2 * N;
  // Rows in chunks of a fixed length, so the loss does not depend on the thread count.
  constexpr int64_t kRowsPerChunk = 16;
  return ordered_sum<double>(N, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    double loss_sum = 0.0;
    for (int64_t n = begin; n < end; ++n) {
      float* row = logits + n * V;
      if (targets[n] < 0) {
        std::fill(row, row + V, 0.0f);
        continue;
      }
      loss_sum += std::log(static_cast<double>(sums[n])) + maxima[n] - target_logits[n];
      const float scale = grad_scale / sums[n];
#pragma omp simd
      for (int64_t v = 0; v < V; ++v) row[v] *= scale;
      const int64_t target = static_cast<int64_t>(targets[n]) - vocab_start;
      if (target >= 0 && target < V) row[target] -= grad_scale;
    }
    return loss_sum;
  });
}

}  // namespace llmft::cpu
