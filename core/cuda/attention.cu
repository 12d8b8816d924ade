// Memory-light causal attention on the GPU, flash-style: tiles of 32 queries against tiles
// of 32 keys in shared memory, an online softmax per query row, and only each row's
// log-sum-exp kept (f32, shape (B, H, T)); backward recomputes the probabilities from it.
// Grouped-query attention: query head h reads kv head h / (H / KVH). Four threads share a
// query (or key) row, each holding every fourth of its head's columns in registers (loops
// over them fully unrolled, so the accumulators stay registers), so the head size is at
// most kMaxHeadDim. Tiles whose rows a warp reads at one column from 8 or 32 rows at once
// (forward's queries, backward's keys and values) are padded to a pitch of D + 1, so the
// rows fall on different banks. A query sees the keys from its sample's start to its own
// row (SampleStarts); tiles outside what a query tile sees are skipped.
//
// Backward runs two kernels and no atomics: one per key tile accumulates dK and dV over
// every query (and every query head of the kv head's group), one per query tile
// accumulates dQ over every key; each writes its rows of dqkv once. So the gradient has
// the same bits on every run. These are the kernels for f32 and for what the tensor-core
// kernels (attention_tensor_cores.cu, tried first) do not take.
#include <cuda_runtime.h>

#include <cmath>

#include "core/cuda/attention_layout.cuh"
#include "core/cuda/attention_tensor_cores.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"
#include "core/error.h"

namespace llmft::cuda {
namespace {

constexpr int kTile = 32;                                   // queries and keys per tile
constexpr int kParts = 4;                                   // threads per row
constexpr int kThreads = kTile * kParts;                    // 128
constexpr int kColumns = kMaxHeadDim / kParts;              // registers per thread for one row
constexpr int kScoresPerThread = kTile * kTile / kThreads;  // 8

// Copies `count` rows of D values starting at element offsets row_offset(i) into a
// shared (kTile, pitch) float tile; rows at or past `count` become zeros.
template <typename T, typename Offset>
__device__ void load_tile(float* tile, int pitch, const T* src, int count, int64_t D,
                          Offset row_offset) {
  for (int idx = threadIdx.x; idx < kTile * D; idx += blockDim.x) {
    const int r = idx / static_cast<int>(D), c = idx % static_cast<int>(D);
    tile[r * pitch + c] = r < count ? load(src[row_offset(r) + c]) : 0.0f;
  }
}

// The K and V tiles (pitch D + 1, against bank conflicts) of kv head g's keys
// j0 .. j0 + keys - 1.
template <typename T>
__device__ void load_keys_values(float* Ks, float* Vs, const T* qkv, int keys,
                                 const AttentionLayout& L, int64_t b, int64_t j0, int64_t g) {
  load_tile(Ks, static_cast<int>(L.D + 1), qkv, keys, L.D,
            [&](int row) { return L.k(b, j0 + row, g); });
  load_tile(Vs, static_cast<int>(L.D + 1), qkv, keys, L.D,
            [&](int row) { return L.v(b, j0 + row, g); });
}

// The shuffle partners of one row: the kParts consecutive lanes that hold it.
__device__ __forceinline__ float row_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float row_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

size_t forward_shared_bytes(int64_t D) {
  return sizeof(float) * (3 * kTile * (D + 1) + kTile * (kTile + 1));
}

template <typename T>
__global__ void forward_kernel(T* out, float* lse, const T* qkv, int64_t T_len, AttentionLayout L,
                               SampleStarts starts, float scale) {
  const int64_t first_query = starts.first_query;
  extern __shared__ float shared[];
  const int64_t D = L.D;
  const int64_t pitch = D + 1;
  float* Qs = shared;              // (kTile, pitch), pre-scaled
  float* Ks = Qs + kTile * pitch;  // (kTile, pitch)
  float* Vs = Ks + kTile * pitch;  // (kTile, pitch)
  float* Ps = Vs + kTile * pitch;  // (kTile, kTile + 1)
  const int64_t b = blockIdx.z, h = blockIdx.y, i0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int64_t g = h / (L.H / L.KVH);
  const int r = threadIdx.x / kParts, part = threadIdx.x % kParts;
  const int queries = tile_rows<kTile>(T_len - i0);
  const int64_t query = first_query + i0 + r;  // this row's position among the keys
  const int64_t first_key = r < queries ? starts.first_key(b, i0 + r) : query;
  load_tile(Qs, static_cast<int>(pitch), qkv, queries, D,
            [&](int row) { return L.q(b, first_query + i0 + row, h); });
  __syncthreads();
  for (int idx = threadIdx.x; idx < kTile * D; idx += blockDim.x)
    Qs[idx / D * pitch + idx % D] *= scale;

  float acc[kColumns] = {};
  float m = -INFINITY, l = 0.0f;
  const int64_t last_key = first_query + i0 + queries - 1;
  for (int64_t j0 = starts.first_key(b, i0) / kTile * kTile; j0 <= last_key; j0 += kTile) {
    const int keys = tile_rows<kTile>(last_key + 1 - j0);
    __syncthreads();
    load_keys_values(Ks, Vs, qkv, keys, L, b, j0, g);
    __syncthreads();
    float s[kScoresPerThread];
    float tile_max = -INFINITY;
    for (int n = 0; n < kScoresPerThread; ++n) {
      const int jj = part * kScoresPerThread + n;
      float dot = 0.0f;
      for (int64_t c = 0; c < D; ++c) dot += Qs[r * pitch + c] * Ks[jj * pitch + c];
      const int64_t key = j0 + jj;
      s[n] = (jj < keys && key >= first_key && key <= query && r < queries) ? dot : -INFINITY;
      tile_max = fmaxf(tile_max, s[n]);
    }
    const float m_new = fmaxf(m, row_max(tile_max));
    const float correction = m_new == -INFINITY ? 1.0f : __expf(m - m_new);
    float tile_sum = 0.0f;
    for (int n = 0; n < kScoresPerThread; ++n) {
      const float p = s[n] == -INFINITY ? 0.0f : __expf(s[n] - m_new);
      Ps[r * (kTile + 1) + part * kScoresPerThread + n] = p;
      tile_sum += p;
    }
    l = l * correction + row_sum(tile_sum);
    m = m_new;
    __syncwarp();  // the row's probabilities come from the 4 lanes that hold it
#pragma unroll
    for (int k = 0; k < kColumns; ++k) {
      const int64_t c = part + kParts * k;
      if (c >= D) continue;
      float sum = acc[k] * correction;
      for (int jj = 0; jj < keys; ++jj) sum += Ps[r * (kTile + 1) + jj] * Vs[jj * pitch + c];
      acc[k] = sum;
    }
  }
  if (r >= queries) return;
  const int64_t t = i0 + r;
  T* o = out + (b * T_len + t) * L.H * D + h * D;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    const int64_t c = part + kParts * k;
    if (c < D) o[c] = store<T>(acc[k] / l);
  }
  if (part == 0) lse[(b * L.H + h) * T_len + t] = m + logf(l);
}

// What both backward kernels share: for one (query tile, key tile) pair in shared memory,
// the probabilities P and dS = P (dP - delta) scale, dP = dO V^T, into Ps and dSs.
struct BackwardTiles {
  float *Qs, *dOs, *Ks, *Vs, *Ps, *dSs, *lse, *delta;
};

__device__ void probabilities(const BackwardTiles& s, int64_t D, const SampleStarts& starts,
                              int64_t b, int64_t i0, int queries, int64_t j0, int keys,
                              float scale) {
  for (int e = threadIdx.x; e < kTile * kTile; e += blockDim.x) {
    const int qr = e / kTile, kr = e % kTile;
    float p = 0.0f, ds = 0.0f;
    if (qr < queries && kr < keys && j0 + kr <= i0 + qr &&
        j0 + kr >= starts.first_key(b, i0 + qr)) {
      float qk = 0.0f, dov = 0.0f;
      for (int64_t c = 0; c < D; ++c) {
        qk += s.Qs[qr * D + c] * s.Ks[kr * (D + 1) + c];
        dov += s.dOs[qr * D + c] * s.Vs[kr * (D + 1) + c];
      }
      p = __expf(scale * qk - s.lse[qr]);
      ds = p * (dov - s.delta[qr]) * scale;
    }
    s.Ps[qr * (kTile + 1) + kr] = p;
    s.dSs[qr * (kTile + 1) + kr] = ds;
  }
}

// The query tile's rows of q and dO, their log-sum-exps and delta = rowsum(dO o O).
template <typename T>
__device__ void load_queries(const BackwardTiles& s, const T* qkv, const T* out, const T* dout,
                             const float* lse, const AttentionLayout& L, int64_t T_len, int64_t b,
                             int64_t h, int64_t i0, int queries) {
  const int64_t D = L.D;
  const int64_t width = L.H * D;
  load_tile(s.Qs, static_cast<int>(D), qkv, queries, D,
            [&](int row) { return L.q(b, i0 + row, h); });
  load_tile(s.dOs, static_cast<int>(D), dout, queries, D,
            [&](int row) { return (b * T_len + i0 + row) * width + h * D; });
  const int r = threadIdx.x / kParts, part = threadIdx.x % kParts;
  float delta = 0.0f;
  if (r < queries) {
    const int64_t row = (b * T_len + i0 + r) * width + h * D;
    for (int64_t c = part; c < D; c += kParts) delta += load(dout[row + c]) * load(out[row + c]);
  }
  delta = row_sum(delta);
  if (part == 0) {
    s.delta[r] = delta;
    s.lse[r] = r < queries ? lse[(b * L.H + h) * T_len + i0 + r] : 0.0f;
  }
}

size_t backward_shared_bytes(int64_t D) {
  return sizeof(float) *
         (2 * kTile * D + 2 * kTile * (D + 1) + 2 * kTile * (kTile + 1) + 2 * kTile);
}

__device__ BackwardTiles backward_tiles(float* shared, int64_t D) {
  BackwardTiles s;
  s.Qs = shared;
  s.dOs = s.Qs + kTile * D;
  s.Ks = s.dOs + kTile * D;
  s.Vs = s.Ks + kTile * (D + 1);
  s.Ps = s.Vs + kTile * (D + 1);
  s.dSs = s.Ps + kTile * (kTile + 1);
  s.lse = s.dSs + kTile * (kTile + 1);
  s.delta = s.lse + kTile;
  return s;
}

// One block per (key tile, kv head, batch): dK and dV of its keys over every query of
// every query head in the group.
template <typename T>
__global__ void key_value_grads_kernel(T* dqkv, const T* qkv, const T* out, const T* dout,
                                       const float* lse, int64_t T_len, AttentionLayout L,
                                       SampleStarts starts, float scale) {
  extern __shared__ float shared[];
  const int64_t D = L.D;
  const BackwardTiles s = backward_tiles(shared, D);
  const int64_t b = blockIdx.z, g = blockIdx.y, j0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int keys = tile_rows<kTile>(T_len - j0);
  const int r = threadIdx.x / kParts, part = threadIdx.x % kParts;
  load_keys_values(s.Ks, s.Vs, qkv, keys, L, b, j0, g);
  float dk[kColumns] = {}, dv[kColumns] = {};
  const int64_t group = L.H / L.KVH;
  for (int64_t h = g * group; h < (g + 1) * group; ++h) {
    for (int64_t i0 = j0 / kTile * kTile; i0 < T_len; i0 += kTile) {
      if (starts.first_key(b, i0) >= j0 + keys) break;  // later tiles start later samples
      const int queries = tile_rows<kTile>(T_len - i0);
      __syncthreads();
      load_queries(s, qkv, out, dout, lse, L, T_len, b, h, i0, queries);
      __syncthreads();
      probabilities(s, D, starts, b, i0, queries, j0, keys, scale);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kColumns; ++k) {
        const int64_t c = part + kParts * k;
        if (c >= D) continue;
        float sum_v = 0.0f, sum_k = 0.0f;
        for (int qr = 0; qr < queries; ++qr) {
          sum_v += s.Ps[qr * (kTile + 1) + r] * s.dOs[qr * D + c];
          sum_k += s.dSs[qr * (kTile + 1) + r] * s.Qs[qr * D + c];
        }
        dv[k] += sum_v;
        dk[k] += sum_k;
      }
    }
  }
  if (r >= keys) return;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    const int64_t c = part + kParts * k;
    if (c >= D) continue;
    dqkv[L.k(b, j0 + r, g) + c] = store<T>(dk[k]);
    dqkv[L.v(b, j0 + r, g) + c] = store<T>(dv[k]);
  }
}

// One block per (query tile, head, batch): dQ of its queries over every key up to them.
template <typename T>
__global__ void query_grads_kernel(T* dqkv, const T* qkv, const T* out, const T* dout,
                                   const float* lse, int64_t T_len, AttentionLayout L,
                                   SampleStarts starts, float scale) {
  extern __shared__ float shared[];
  const int64_t D = L.D;
  const BackwardTiles s = backward_tiles(shared, D);
  const int64_t b = blockIdx.z, h = blockIdx.y, i0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int64_t g = h / (L.H / L.KVH);
  const int queries = tile_rows<kTile>(T_len - i0);
  const int r = threadIdx.x / kParts, part = threadIdx.x % kParts;
  load_queries(s, qkv, out, dout, lse, L, T_len, b, h, i0, queries);
  float dq[kColumns] = {};
  for (int64_t j0 = starts.first_key(b, i0) / kTile * kTile; j0 < i0 + queries; j0 += kTile) {
    const int keys = tile_rows<kTile>(T_len - j0);
    __syncthreads();
    load_keys_values(s.Ks, s.Vs, qkv, keys, L, b, j0, g);
    __syncthreads();
    probabilities(s, D, starts, b, i0, queries, j0, keys, scale);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kColumns; ++k) {
      const int64_t c = part + kParts * k;
      if (c >= D) continue;
      float sum = 0.0f;
      for (int kr = 0; kr < keys; ++kr) sum += s.dSs[r * (kTile + 1) + kr] * s.Ks[kr * (D + 1) + c];
      dq[k] += sum;
    }
  }
  if (r >= queries) return;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    const int64_t c = part + kParts * k;
    if (c < D) dqkv[L.q(b, i0 + r, h) + c] = store<T>(dq[k]);
  }
}

void require_head_dim(int64_t D) {
  LLMFT_REQUIRE(D > 0 && D <= kMaxHeadDim, "cuda attention: head size "
                                               << D << " is larger than the kernels' "
                                               << kMaxHeadDim);
}

}  // namespace

void attention_forward(void* out, float* lse, const void* qkv, const int32_t* positions, DType type,
                       int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                       int64_t first_query, cudaStream_t stream) {
  require_head_dim(D);
  if (B * T == 0) return;
  const SampleStarts starts{positions, T, first_query};
  if (tensor_core_attention_forward(out, lse, qkv, type, B, T, H, KVH, D, R, starts, stream))
    return;
  const dim3 grid(static_cast<unsigned>((T + kTile - 1) / kTile), static_cast<unsigned>(H),
                  static_cast<unsigned>(B));
  const size_t bytes = forward_shared_bytes(D);
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    allow_shared(forward_kernel<S>, bytes);
    forward_kernel<S><<<grid, kThreads, bytes, stream>>>(
        static_cast<S*>(out), lse, static_cast<const S*>(qkv), T, AttentionLayout{R, H, KVH, D},
        starts, 1.0f / std::sqrt(static_cast<float>(D)));
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void attention_backward(void* dqkv, const void* dout, const void* qkv, const void* out,
                        const float* lse, const int32_t* positions, DType type, int64_t B,
                        int64_t T, int64_t H, int64_t KVH, int64_t D, cudaStream_t stream) {
  require_head_dim(D);
  if (B * T == 0) return;
  const SampleStarts starts{positions, T, 0};
  if (tensor_core_attention_backward(dqkv, dout, qkv, out, lse, type, B, T, H, KVH, D, starts,
                                     stream))
    return;
  const unsigned tiles = static_cast<unsigned>((T + kTile - 1) / kTile);
  const size_t bytes = backward_shared_bytes(D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const AttentionLayout L{T, H, KVH, D};
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    allow_shared(key_value_grads_kernel<S>, bytes);
    key_value_grads_kernel<S>
        <<<dim3(tiles, static_cast<unsigned>(KVH), static_cast<unsigned>(B)), kThreads, bytes,
           stream>>>(static_cast<S*>(dqkv), static_cast<const S*>(qkv), static_cast<const S*>(out),
                     static_cast<const S*>(dout), lse, T, L, starts, scale);
    LLMFT_CUDA_LAUNCH_CHECK();
    allow_shared(query_grads_kernel<S>, bytes);
    query_grads_kernel<S>
        <<<dim3(tiles, static_cast<unsigned>(H), static_cast<unsigned>(B)), kThreads, bytes,
           stream>>>(static_cast<S*>(dqkv), static_cast<const S*>(qkv), static_cast<const S*>(out),
                     static_cast<const S*>(dout), lse, T, L, starts, scale);
    LLMFT_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace llmft::cuda
