// Memory-light causal self-attention on CPU. Forward runs an online softmax per query
// row and keeps only the row's log-sum-exp; backward recomputes each probability from
// q, k and the log-sum-exp (as flash attention does), so no (B, H, T, T) tensor exists.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

namespace {

inline float dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

inline void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// Offsets into one token's packed qkv row of width (H + 2 KVH) D; T rows per batch.
struct QkvLayout {
  int64_t T, H, KVH, D, row;
  const float* q(const float* qkv, int64_t b, int64_t t, int64_t h) const {
    return qkv + (b * T + t) * row + h * D;
  }
  const float* k(const float* qkv, int64_t b, int64_t t, int64_t g) const {
    return qkv + (b * T + t) * row + (H + g) * D;
  }
  const float* v(const float* qkv, int64_t b, int64_t t, int64_t g) const {
    return qkv + (b * T + t) * row + (H + KVH + g) * D;
  }
};

}  // namespace

void attention_forward(float* out, float* lse, const float* qkv, int64_t B, int64_t T, int64_t H,
                       int64_t KVH, int64_t D, int64_t R, int64_t first_query) {
  const QkvLayout L{R, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t group = H / KVH;
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t t = 0; t < T; ++t) {
        const int64_t i = first_query + t, g = h / group;
        const float* q = L.q(qkv, b, i, h);
        float* o = out + (b * T + t) * H * D + h * D;
        std::memset(o, 0, sizeof(float) * D);
        float row_max = -std::numeric_limits<float>::infinity();
        float row_sum = 0.0f;
        for (int64_t j = 0; j <= i; ++j) {
          float s = scale * dot(q, L.k(qkv, b, j, g), D);
          if (s > row_max) {
            float correction = std::exp(row_max - s);
            row_sum *= correction;
            for (int64_t d = 0; d < D; ++d) o[d] *= correction;
            row_max = s;
          }
          float p = std::exp(s - row_max);
          row_sum += p;
          axpy(o, p, L.v(qkv, b, j, g), D);
        }
        float inv = 1.0f / row_sum;
        for (int64_t d = 0; d < D; ++d) o[d] *= inv;
        lse[(b * H + h) * T + t] = row_max + std::log(row_sum);
      }
    }
  }
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D) {
  const QkvLayout L{T, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t group = H / KVH;
  // Each (b, kv head) task owns the dk/dv rows of its kv head and the dq rows of the
  // query heads that read it, so tasks never write the same element.
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t t = 0; t < T; ++t) {
        float* row = dqkv + (b * T + t) * L.row;
        for (int64_t h = g * group; h < (g + 1) * group; ++h)
          std::memset(row + h * D, 0, sizeof(float) * D);
        std::memset(row + (H + g) * D, 0, sizeof(float) * D);
        std::memset(row + (H + KVH + g) * D, 0, sizeof(float) * D);
      }
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        for (int64_t i = 0; i < T; ++i) {
          const float* q = L.q(qkv, b, i, h);
          const float* o = out + (b * T + i) * H * D + h * D;
          const float* dout_row = dout + (b * T + i) * H * D + h * D;
          float* dq = dqkv + (b * T + i) * L.row + h * D;
          const float row_lse = lse[(b * H + h) * T + i];
          const float delta = dot(dout_row, o, D);
          for (int64_t j = 0; j <= i; ++j) {
            const float* k = L.k(qkv, b, j, g);
            const float* v = L.v(qkv, b, j, g);
            float p = std::exp(scale * dot(q, k, D) - row_lse);
            float ds = p * (dot(dout_row, v, D) - delta) * scale;
            axpy(dq, ds, k, D);
            axpy(dqkv + (b * T + j) * L.row + (H + g) * D, ds, q, D);
            axpy(dqkv + (b * T + j) * L.row + (H + KVH + g) * D, p, dout_row, D);
          }
        }
      }
    }
  }
}

}  // namespace llmft::cpu
