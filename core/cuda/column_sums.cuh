// Sums down the columns of an (N, C) array in a fixed order, for the weight- and bias-
// gradient kernels (and AdaLomo's column statistics): a block takes 32 adjacent columns,
// a lane each, and kColumnWarps warps split the rows (warp w adds rows w, w + kColumnWarps,
// ...); warp 0 then adds the warps' sums in warp order. The order depends only on N, so
// the bits are the same on every run and GPU; one thread walking every row of its column
// left all but C / 256 of the GPU's multiprocessors idle.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace llmft::cuda {

constexpr int kColumnWarps = 16;
constexpr int kColumnThreads = 32 * kColumnWarps;

inline unsigned column_blocks(int64_t C) {
  return static_cast<unsigned>((C + 31) / 32);
}

// This thread's column (it may lie past the array's last).
__device__ __forceinline__ int64_t block_column() {
  return blockIdx.x * int64_t{32} + threadIdx.x % 32;
}

// The sum of term(n) over n < N for this lane's column, returned to warp 0 (the other
// warps get zero). Acc: a trivially constructible type with +=, zero when value-initialised.
// Every thread of the block must call it; term must return zero past the last column.
template <typename Acc, typename Term>
__device__ Acc column_sum(int64_t N, Term term) {
  __shared__ Acc partial[kColumnWarps][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  Acc sum{};
  for (int64_t n = warp; n < N; n += kColumnWarps) sum += term(n);
  partial[warp][lane] = sum;
  __syncthreads();
  Acc total{};
  if (warp == 0) {
    for (int w = 0; w < kColumnWarps; ++w) total += partial[w][lane];
  }
  return total;
}

}  // namespace llmft::cuda
