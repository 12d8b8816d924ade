// Linear layers on CPU: every product is one OpenBLAS sgemm.
#include <cblas.h>

#include <algorithm>

#include "core/cpu/cpu_kernels.h"

namespace llmft::cpu {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int64_t N,
                    int64_t C, int64_t OC) {
  float beta = 0.0f;
  if (bias != nullptr) {
#pragma omp parallel for
    for (int64_t n = 0; n < N; ++n) std::copy(bias, bias + OC, out + n * OC);
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, weight, C, beta, out,
              OC);
}

namespace {

// dbias(OC) += sum over rows of dout(N, OC); threads own column blocks.
void accumulate_column_sums(float* dbias, const float* dout, int64_t N, int64_t OC) {
  constexpr int64_t kBlock = 256;
#pragma omp parallel for schedule(static)
  for (int64_t start = 0; start < OC; start += kBlock) {
    int64_t width = std::min(kBlock, OC - start);
    float acc[kBlock] = {0.0f};
    for (int64_t n = 0; n < N; ++n) {
      const float* row = dout + n * OC + start;
      for (int64_t o = 0; o < width; ++o) acc[o] += row[o];
    }
    for (int64_t o = 0; o < width; ++o) dbias[start + o] += acc[o];
  }
}

}  // namespace

void linear_backward(float* dinp, bool accumulate_dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, int64_t N, int64_t C,
                     int64_t OC) {
  if (dinp != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, weight, C,
                accumulate_dinp ? 1.0f : 0.0f, dinp, C);
  }
  if (dweight != nullptr) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f,
                dweight, C);
  }
  if (dbias != nullptr) accumulate_column_sums(dbias, dout, N, OC);
}

}  // namespace llmft::cpu
