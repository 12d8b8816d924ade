// Packs: the kPack consecutive elements that a thread of a memory-bound kernel moves at
// once, held as f32, with 16-byte loads and stores where the tensor allows them and element
// accesses where it does not (a pointer or a row stride off 16 bytes, the last, partial
// pack of a run). A pack of 8 is one 16-byte access of bf16/fp16 and two of f32, so the
// operands of a mixed-dtype kernel cover the same elements per thread, each with its widest
// aligned access. Whether 16-byte accesses may serve a tensor is decided on the host, at
// launch (aligned_for_packs), and travels to the kernel as a flag.
#pragma once

#include <cstdint>

#include "core/cuda/device_types.cuh"

namespace llmft::cuda {

constexpr int kPack = 8;
constexpr int kAccessBytes = 16;  // the widest load or store of one thread

// Whether 16-byte accesses may serve a flat tensor at p.
inline bool aligned_for_packs(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kAccessBytes == 0;
}
// The same for a tensor at p whose rows start every `row_elements` elements.
template <typename T>
bool rows_aligned_for_packs(const T* p, int64_t row_elements) {
  return aligned_for_packs(p) && row_elements * static_cast<int64_t>(sizeof(T)) % kAccessBytes == 0;
}

// Blocks of `threads` threads covering n elements, a pack per thread.
inline unsigned pack_blocks(int64_t n, int threads) {
  return blocks_for((n + kPack - 1) / kPack, threads);
}

// The elements first .. first + count - 1 of a run (count <= kPack: fewer only in the
// run's last pack, none past its end); `vector` when 16-byte accesses serve them.
struct PackSpan {
  int64_t first;
  int count;
  bool vector;
};

// Pack number `pack` of a run of n elements.
__device__ __forceinline__ PackSpan pack_span(int64_t pack, int64_t n, bool aligned) {
  const int64_t first = pack * kPack;
  const int count = static_cast<int>(first >= n ? 0 : (n - first < kPack ? n - first : kPack));
  return PackSpan{first, count, aligned && count == kPack};
}

// Thread x's pack along block `block` of blockDim.x threads.
__device__ __forceinline__ int64_t pack_index_in(unsigned block) {
  return block * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}

// 16 bytes of T, aligned for one access.
template <typename T>
struct alignas(kAccessBytes) Access {
  T e[kAccessBytes / sizeof(T)];
};
template <typename T>
constexpr int kPerAccess = kAccessBytes / sizeof(T);

// v = the pack's elements of p in f32; 0 where the pack has none.
template <typename T>
__device__ __forceinline__ void load_pack(float (&v)[kPack], const T* p, PackSpan s) {
  if (s.vector) {
    const Access<T>* words = reinterpret_cast<const Access<T>*>(p + s.first);
#pragma unroll
    for (int w = 0; w < kPack / kPerAccess<T>; ++w) {
      const Access<T> word = words[w];
#pragma unroll
      for (int k = 0; k < kPerAccess<T>; ++k) v[w * kPerAccess<T> + k] = load(word.e[k]);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kPack; ++k) v[k] = k < s.count ? load(p[s.first + k]) : 0.0f;
}

// The pack's elements of p = v, each rounded once into T.
template <typename T>
__device__ __forceinline__ void store_pack(T* p, const float (&v)[kPack], PackSpan s) {
  if (s.vector) {
    Access<T>* words = reinterpret_cast<Access<T>*>(p + s.first);
#pragma unroll
    for (int w = 0; w < kPack / kPerAccess<T>; ++w) {
      Access<T> word;
#pragma unroll
      for (int k = 0; k < kPerAccess<T>; ++k) word.e[k] = store<T>(v[w * kPerAccess<T> + k]);
      words[w] = word;
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    if (k < s.count) p[s.first + k] = store<T>(v[k]);
  }
}

}  // namespace llmft::cuda
