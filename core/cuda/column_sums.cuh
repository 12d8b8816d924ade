// Sums down the columns of an (N, C) array in a fixed order, for the weight- and bias-
// gradient kernels (and AdaLomo's column statistics): a block takes 16 adjacent columns,
// and each half-warp reads them from one row (32 bytes of bf16, one memory sector): its
// kRowSlots half-warps split the rows (slot s adds rows s, s + kRowSlots, ...), and the
// first 16 threads then add the slots' sums in slot order. The order depends only on N,
// so the bits are the same on every run and GPU. 32 columns a block (a warp a row) left
// half of a 132-multiprocessor GPU idle at hidden size 2048, and one thread walking every
// row of its column all but C / 256 of them. A thread loads kRowsInFlight rows before it
// adds them (in row order, as one at a time would): the H200 profile had the bias
// gradients of gpt2 (48 blocks) at about 280 GB/s and RMSNorm's weight gradients of
// TinyLlama (128 blocks) at about 1.1 TB/s, what one 2-byte load a thread in flight at
// a time allows, so each warp now keeps 8 of them on their way from memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace llmft::cuda {

constexpr int kColumns = 16;  // a block's columns: a half-warp's lanes
constexpr int kColumnWarps = 32;
constexpr int kColumnThreads = 32 * kColumnWarps;  // kernels declare __launch_bounds__ of it
constexpr int kRowSlots = 2 * kColumnWarps;
constexpr int kRowsInFlight = 8;  // a thread's loads issued before their sums
static_assert(kColumnThreads <= 1024, "a block holds at most 1024 threads");

inline unsigned column_blocks(int64_t C) {
  return static_cast<unsigned>((C + kColumns - 1) / kColumns);
}

// This thread's column (it may lie past the array's last).
__device__ __forceinline__ int64_t block_column() {
  return blockIdx.x * int64_t{kColumns} + threadIdx.x % kColumns;
}

// Whether this thread holds its column's total after column_sum: one thread a column.
__device__ __forceinline__ bool holds_column_total() {
  return threadIdx.x < kColumns;
}

// The sum of term(n) over n < N for this thread's column of C, returned to the thread that
// holds_column_total (the others get zero). Acc: a trivially constructible type with +=,
// zero when value-initialised. Every thread of the block must call it; term is called
// only for columns below C, without a branch, so that the loads of kRowsInFlight calls
// are issued together.
template <typename Acc, typename Term>
__device__ Acc column_sum(int64_t N, int64_t C, Term term) {
  __shared__ Acc partial[kRowSlots][kColumns];
  const int slot = threadIdx.x / kColumns, column = threadIdx.x % kColumns;
  Acc sum{};
  if (block_column() < C) {
    int64_t n = slot;
    for (; n + (kRowsInFlight - 1) * kRowSlots < N; n += kRowsInFlight * kRowSlots) {
      Acc terms[kRowsInFlight];
#pragma unroll
      for (int r = 0; r < kRowsInFlight; ++r) terms[r] = term(n + r * kRowSlots);
#pragma unroll
      for (int r = 0; r < kRowsInFlight; ++r) sum += terms[r];
    }
    for (; n < N; n += kRowSlots) sum += term(n);
  }
  partial[slot][column] = sum;
  __syncthreads();
  Acc total{};
  if (holds_column_total()) {
    for (int s = 0; s < kRowSlots; ++s) total += partial[s][column];
  }
  return total;
}

}  // namespace llmft::cuda
