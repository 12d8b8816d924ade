// Token (+ learned position) embedding on CPU.
#include <algorithm>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

namespace {

// The row of this rank's slice holding token n, or -1 when another rank holds it.
int64_t local_row(const int32_t* tokens, int64_t n, int64_t vocab_start, int64_t rows) {
  const int64_t row = static_cast<int64_t>(tokens[n]) - vocab_start;
  return row >= 0 && row < rows ? row : -1;
}

// table[row_of(n)] += dout[n] for every n whose row_of(n) >= 0, in the order of n. Rows
// may repeat across n, so threads own column blocks instead of rows.
template <typename RowOf>
void scatter_add_rows(float* table, const float* dout, int64_t N, int64_t C, RowOf row_of) {
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < C; start += kBlock) {
    const int64_t end = std::min(C, start + kBlock);
    for (int64_t n = 0; n < N; ++n) {
      const int64_t local = row_of(n);
      if (local < 0) continue;
      float* row = table + local * C;
      const float* d = dout + n * C;
      for (int64_t c = start; c < end; ++c) row[c] += d[c];
    }
  }
}

}  // namespace

void embedding_forward(float* out, const int32_t* tokens, const int32_t* positions,
                       const float* wte, const float* wpe, int64_t N, int64_t C,
                       int64_t vocab_start, int64_t rows) {
#pragma omp parallel for
  for (int64_t n = 0; n < N; ++n) {
    const int64_t row = local_row(tokens, n, vocab_start, rows);
    float* out_row = out + n * C;
    if (row < 0) {
      std::fill(out_row, out_row + C, 0.0f);
    } else {
      std::copy_n(wte + row * C, C, out_row);
    }
    if (wpe == nullptr) continue;
    const float* pos_row = wpe + static_cast<int64_t>(positions[n]) * C;
    for (int64_t c = 0; c < C; ++c) out_row[c] += pos_row[c];
  }
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                        const int32_t* positions, int64_t N, int64_t C, int64_t vocab_start,
                        int64_t rows) {
  scatter_add_rows(dwte, dout, N, C,
                   [&](int64_t n) { return local_row(tokens, n, vocab_start, rows); });
  if (dwpe == nullptr) return;
  scatter_add_rows(dwpe, dout, N, C, [&](int64_t n) { return int64_t{positions[n]}; });
}

}  // namespace llmft::cpu
