// Token (+ learned position) embedding on CPU.
#include <algorithm>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

void embedding_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                       int64_t N, int64_t T, int64_t C, int64_t position_offset) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const float* tok_row = wte + static_cast<int64_t>(tokens[n]) * C;
    float* out_row = out + n * C;
    if (wpe == nullptr) {
      std::copy(tok_row, tok_row + C, out_row);
      continue;
    }
    const float* pos_row = wpe + (n % T + position_offset) * C;
    for (int64_t c = 0; c < C; ++c) out_row[c] = tok_row[c] + pos_row[c];
  }
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                        int64_t N, int64_t T, int64_t C) {
  // Rows of dwte may repeat across n, so threads own column blocks instead of rows.
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < C; start += kBlock) {
    int64_t end = std::min(C, start + kBlock);
    for (int64_t n = 0; n < N; ++n) {
      float* row = dwte + static_cast<int64_t>(tokens[n]) * C;
      const float* d = dout + n * C;
      for (int64_t c = start; c < end; ++c) row[c] += d[c];
    }
  }
  if (dwpe == nullptr) return;
#pragma omp parallel for
  for (int64_t t = 0; t < T; ++t) {
    float* row = dwpe + t * C;
    for (int64_t n = t; n < N; n += T) {
      const float* d = dout + n * C;
      for (int64_t c = 0; c < C; ++c) row[c] += d[c];
    }
  }
}

}  // namespace llmft::cpu
