// A row of a tensor held in registers by the thread block that owns it, so that a
// row-wise kernel (a norm, its input gradient) reads each element once however many
// statistics it needs: thread t holds packs t, t + blockDim.x, ... of the row
// (vector_access.cuh), and sums over the row run in a fixed order (block_reduce.cuh).
// Rows wider than kMaxRegisterRow do not fit; their kernels read the row again per pass.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/cuda/block_reduce.cuh"
#include "core/cuda/vector_access.cuh"

namespace llmft::cuda {

// The widest row held in registers: kMaxRowThreads threads of up to kMaxPacksPerThread
// packs each (16 floats, within the 64 registers a thread of a 1024-thread block has).
constexpr int kMaxRowThreads = 1024;
constexpr int kMaxPacksPerThread = 2;
constexpr int64_t kMaxRegisterRow = int64_t{kMaxRowThreads} * kMaxPacksPerThread * kPack;

// Whether a row of C elements fits a block's registers.
inline bool row_fits_registers(int64_t C) {
  return C <= kMaxRegisterRow;
}

// A thread's share of a row of C elements, in f32: packs t, t + blockDim.x, ... of it for
// thread t (P of them; those past the row's end empty). Which elements a thread holds, and
// so the order of every sum, does not depend on whether 16-byte accesses serve them.
template <int P>
struct RowSlice {
  PackSpan span[P];
  float v[P][kPack];

  __device__ RowSlice(int64_t C, bool aligned) {
#pragma unroll
    for (int j = 0; j < P; ++j) span[j] = pack_span(pack_index_in(j), C, aligned);
  }
  template <typename T>
  __device__ void read(const T* row) {
#pragma unroll
    for (int j = 0; j < P; ++j) load_pack(v[j], row, span[j]);
  }
  template <typename T>
  __device__ void write(T* row) const {
#pragma unroll
    for (int j = 0; j < P; ++j) store_pack(row, v[j], span[j]);
  }
  // The sum over the whole row of terms, returned to every thread of the block: f(j, t)
  // fills t[k] with the term of element k of the thread's pack j (it may read the same
  // elements of other slices of the row); each thread adds its terms in order, then
  // block_sum's fixed tree adds the threads'.
  template <typename F>
  __device__ float row_total(F f, float* shared) const {
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < P; ++j) {
      float terms[kPack];
      f(j, terms);
#pragma unroll
      for (int k = 0; k < kPack; ++k) {
        if (k < span[j].count) sum += terms[k];
      }
    }
    return block_sum(sum, shared);
  }
  // The same with f(element) the term of each element.
  template <typename F>
  __device__ float row_sum(F f, float* shared) const {
    return row_total(
        [&](int j, float(&terms)[kPack]) {
#pragma unroll
          for (int k = 0; k < kPack; ++k) terms[k] = f(v[j][k]);
        },
        shared);
  }
};

// The block of a row of C (at most kMaxRegisterRow): the fewest packs per thread P that
// kMaxRowThreads threads can hold it with, and whole warps of threads. Calls
// f(std::integral_constant<int, P>{}, threads).
template <typename F>
void with_row_slice(int64_t C, F&& f) {
  const int64_t packs = (C + kPack - 1) / kPack;
  const auto threads = [&](int64_t per_thread) {
    const int64_t needed = (packs + per_thread - 1) / per_thread;
    return static_cast<int>((needed + 31) / 32 * 32);
  };
  static_assert(kMaxPacksPerThread == 2, "one case per packs-per-thread count");
  if (packs <= kMaxRowThreads) return f(std::integral_constant<int, 1>{}, threads(1));
  f(std::integral_constant<int, 2>{}, threads(2));
}

}  // namespace llmft::cuda
