// Flash attention on tensor cores for bf16 and fp16: WMMA 16x16x16 products with f32
// accumulation, run by attention.cu's launchers when the head size is one these kernels
// are built for, every tensor is 16-byte aligned and the device has the shared memory;
// attention.cu's f32-arithmetic kernels take everything else. The contract is theirs:
// causal, grouped-query, packed qkv, each row's log-sum-exp kept, the probabilities
// recomputed in backward by two kernels without atomics (the same bits on every run).
//
// A block of four warps takes 64 queries (forward, dQ) or 64 keys (dK, dV), each warp 16
// of them, and walks the 64-row tiles of the other side through shared memory. WMMA
// leaves the element layout of its accumulator fragments unspecified, so every score tile
// goes from the fragments to a warp's f32 scratch in shared memory, where two lanes per
// row apply the causal mask, the online softmax (forward) or dS = P (dP - delta)
// (backward); P and dS are rounded to the stored dtype to feed the next product, as
// FlashAttention-2 does, and backward forms dS from the rounded P (it reads P back from
// shared memory instead of holding a row of it in registers across the dP product). The forward's
// output accumulator stays in the lanes' registers (rescaled per row); the backward's dV and dQ
// stay in fragments, its dK in a warp's f32 tile in shared memory. See docs/ARCHITECTURE.md,
// "CUDA attention".
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "core/cuda/attention_layout.cuh"
#include "core/cuda/attention_tensor_cores.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/device_types.cuh"

namespace llmft::cuda {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kEdge = 16;                  // a WMMA tile's edge
constexpr int kRows = kWarps * kEdge;      // queries or keys per block tile: 64
constexpr int kFragments = kRows / kEdge;  // score fragments per warp row: 4
constexpr int kLaneColumns = kRows / 2;    // score columns per lane: 32
constexpr uint32_t kAllLanes = 0xffffffffu;

// Shared-memory pitches (elements) for head size D: 16-bit rows padded by 16 bytes so
// rows fall on different banks; WMMA wants pitches of 16 bytes and 32-byte aligned tiles,
// which every offset below keeps (each region's size is a multiple of 32 bytes).
template <int D>
struct Pitch {
  static constexpr int row = D + 8;                           // a (64, D) tile
  static constexpr int probs = kRows + 8;                     // a warp's (16, 64) P or dS
  static constexpr int scores = (D > kRows ? D : kRows) + 4;  // a warp's f32 scratch
};

template <typename T>
using RowA = wmma::fragment<wmma::matrix_a, kEdge, kEdge, kEdge, T, wmma::row_major>;
template <typename T>
using RowB = wmma::fragment<wmma::matrix_b, kEdge, kEdge, kEdge, T, wmma::row_major>;
template <typename T>
using ColB = wmma::fragment<wmma::matrix_b, kEdge, kEdge, kEdge, T, wmma::col_major>;
using Accumulator = wmma::fragment<wmma::accumulator, kEdge, kEdge, kEdge, float>;

// The grid is (sequences, heads, tiles), heaviest tiles first. Under the causal mask a
// tile's work grows with its queries' positions (a forward or dQ tile of the last queries
// meets every key tile, one of the first queries one) and shrinks with its keys' (dK, dV):
// up to 64-fold at 4096 positions. Blocks start in grid order, x fastest, so with the tile
// on z every sequence's and head's heaviest tiles start first and the light ones fill the
// multiprocessors behind them, instead of the last (sequence, head)'s heavy tiles running
// alone at the end.
inline dim3 tile_grid(int64_t T, int64_t B, int64_t heads) {
  return dim3(static_cast<unsigned>(B), static_cast<unsigned>(heads),
              static_cast<unsigned>((T + kRows - 1) / kRows));
}
__device__ __forceinline__ int64_t query_tile() {
  return gridDim.z - 1 - blockIdx.z;
}
__device__ __forceinline__ int64_t key_tile() {
  return blockIdx.z;
}

// Copies `count` rows of D values (row i at src + row_offset(i)) into a shared (64, pitch)
// tile in 16-byte pieces; rows at or past `count` become zeros.
template <int D, typename T, typename Offset>
__device__ void load_rows(T* tile, const T* src, int count, Offset row_offset) {
  constexpr int kPer = 16 / sizeof(T);
  constexpr int kPieces = D / kPer;
  for (int idx = threadIdx.x; idx < kRows * kPieces; idx += kThreads) {
    const int r = idx / kPieces, c = idx % kPieces * kPer;
    uint4 piece = make_uint4(0u, 0u, 0u, 0u);
    if (r < count) piece = *reinterpret_cast<const uint4*>(src + row_offset(r) + c);
    *reinterpret_cast<uint4*>(tile + r * Pitch<D>::row + c) = piece;
  }
}

// The K and V tiles of kv head g's keys j0 .. j0 + keys - 1 (zeros past them).
template <int D, typename T>
__device__ void load_keys_values(T* Ks, T* Vs, const T* qkv, int keys, const AttentionLayout& L,
                                 int64_t b, int64_t j0, int64_t g) {
  load_rows<D>(Ks, qkv, keys, [&](int key) { return L.k(b, j0 + key, g); });
  load_rows<D>(Vs, qkv, keys, [&](int key) { return L.v(b, j0 + key, g); });
}

// A warp's scores(16, 64) = a(16, D) b(64, D)^T into its f32 scratch; a and b are tiles in
// shared memory with the row pitch.
template <int D, typename T>
__device__ __forceinline__ void scores_of(float* scratch, const T* a, const T* b) {
  Accumulator acc[kFragments];
#pragma unroll
  for (int n = 0; n < kFragments; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll 2
  for (int k = 0; k < D; k += kEdge) {
    RowA<T> fa;
    wmma::load_matrix_sync(fa, a + k, Pitch<D>::row);
#pragma unroll
    for (int n = 0; n < kFragments; ++n) {
      ColB<T> fb;
      wmma::load_matrix_sync(fb, b + n * kEdge * Pitch<D>::row + k, Pitch<D>::row);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
#pragma unroll
  for (int n = 0; n < kFragments; ++n)
    wmma::store_matrix_sync(scratch + n * kEdge, acc[n], Pitch<D>::scores, wmma::mem_row_major);
}

// acc(16, 16) += a(16, 64) b(64, 16): a is a warp's P or dS, b the column block at `b`
// of a (64, D) tile.
template <int D, typename T>
__device__ __forceinline__ void accumulate(Accumulator& acc, const T* a, const T* b) {
#pragma unroll
  for (int k = 0; k < kRows; k += kEdge) {
    RowA<T> fa;
    wmma::load_matrix_sync(fa, a + k, Pitch<D>::probs);
    RowB<T> fb;
    wmma::load_matrix_sync(fb, b + k * Pitch<D>::row, Pitch<D>::row);
    wmma::mma_sync(acc, fa, fb, acc);
  }
}

// Writes a warp's 16 rows of a (16, D) f32 tile in shared memory (row pitch
// Pitch<D>::scores), scaled, into dst at row_offset(row); rows at or past `count` (of the
// block's 64) are not written.
template <int D, typename T, typename Offset>
__device__ void write_tile_rows(T* dst, const float* tile, float scale, int warp_row, int count,
                                Offset row_offset) {
  __syncwarp();
  const int lane = threadIdx.x % 32, r = lane >> 1, half = lane & 1;
  if (warp_row + r < count) {
    T* out = dst + row_offset(warp_row + r);
    for (int c = half; c < D; c += 2) out[c] = store<T>(tile[r * Pitch<D>::scores + c] * scale);
  }
}

// Writes a warp's 16 rows of (16, D) accumulators, scaled, into dst at row_offset(row),
// through its scratch; rows at or past `count` (of the block's 64) are not written.
template <int D, typename T, typename Offset>
__device__ void write_rows(T* dst, Accumulator* acc, float scale, float* scratch, int warp_row,
                           int count, Offset row_offset) {
  __syncwarp();
#pragma unroll
  for (int n = 0; n < D / kEdge; ++n)
    wmma::store_matrix_sync(scratch + n * kEdge, acc[n], Pitch<D>::scores, wmma::mem_row_major);
  write_tile_rows<D>(dst, scratch, scale, warp_row, count, row_offset);
}

template <int D, typename T>
constexpr size_t forward_shared_bytes() {
  return sizeof(T) * (3 * kRows * Pitch<D>::row + kWarps * kEdge * Pitch<D>::probs) +
         sizeof(float) * kWarps * kEdge * Pitch<D>::scores;
}

// One block per (64 queries, head, batch).
template <int D, typename T>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(T* out, float* lse, const T* qkv, int64_t T_len, AttentionLayout L,
                   SampleStarts starts, float scale) {
  const int64_t first_query = starts.first_query;
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane >> 1, half = lane & 1;
  T* Qs = reinterpret_cast<T*>(shared);
  T* Ks = Qs + kRows * Pitch<D>::row;
  T* Vs = Ks + kRows * Pitch<D>::row;
  T* probs = Vs + kRows * Pitch<D>::row + warp * kEdge * Pitch<D>::probs;
  float* scratch =
      reinterpret_cast<float*>(Vs + kRows * Pitch<D>::row + kWarps * kEdge * Pitch<D>::probs) +
      warp * kEdge * Pitch<D>::scores;
  const int64_t b = blockIdx.x, h = blockIdx.y, i0 = query_tile() * static_cast<int64_t>(kRows);
  const int64_t g = h / (L.H / L.KVH);
  const int queries = tile_rows<kRows>(T_len - i0);
  load_rows<D>(Qs, qkv, queries, [&](int row) { return L.q(b, first_query + i0 + row, h); });
  const int row = warp * kEdge + r;
  const int64_t query = first_query + i0 + row;  // this row's position among the keys
  const int64_t first_key = row < queries ? starts.first_key(b, i0 + row) : query;
  float acc[D / 2] = {};  // columns half, half + 2, ...
  float m = -INFINITY, l = 0.0f;
  const int64_t last_key = first_query + i0 + queries - 1;
  for (int64_t j0 = starts.first_key(b, i0) / kRows * kRows; j0 <= last_key; j0 += kRows) {
    const int keys = tile_rows<kRows>(last_key + 1 - j0);
    __syncthreads();
    load_keys_values<D>(Ks, Vs, qkv, keys, L, b, j0, g);
    __syncthreads();
    scores_of<D>(scratch, Qs + warp * kEdge * Pitch<D>::row, Ks);
    __syncwarp();
    const float* s = scratch + r * Pitch<D>::scores;
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kLaneColumns; ++c) {
      const int j = 2 * c + half;
      if (j < keys && j0 + j <= query && j0 + j >= first_key) {
        tile_max = fmaxf(tile_max, s[j] * scale);
      }
    }
    const float m_new = fmaxf(m, fmaxf(tile_max, __shfl_xor_sync(kAllLanes, tile_max, 1)));
    const float correction = m_new == -INFINITY ? 1.0f : __expf(m - m_new);
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kLaneColumns; ++c) {
      const int j = 2 * c + half;
      const bool seen = j < keys && j0 + j <= query && j0 + j >= first_key;
      const float p = seen ? __expf(s[j] * scale - m_new) : 0.0f;
      probs[r * Pitch<D>::probs + j] = store<T>(p);
      sum += p;
    }
    l = l * correction + sum + __shfl_xor_sync(kAllLanes, sum, 1);
    m = m_new;
    __syncwarp();  // P is written and the scores read: the scratch takes P V
#pragma unroll
    for (int n = 0; n < D / kEdge; ++n) {
      Accumulator pv;
      wmma::fill_fragment(pv, 0.0f);
      accumulate<D>(pv, probs, Vs + n * kEdge);
      wmma::store_matrix_sync(scratch + n * kEdge, pv, Pitch<D>::scores, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int c = 0; c < D / 2; ++c)
      acc[c] = acc[c] * correction + scratch[r * Pitch<D>::scores + 2 * c + half];
  }
  if (row >= queries) return;
  const int64_t t = i0 + row;
  T* o = out + (b * T_len + t) * L.H * D + h * D;
#pragma unroll
  for (int c = 0; c < D / 2; ++c) o[2 * c + half] = store<T>(acc[c] / l);
  if (half == 0) lse[(b * L.H + h) * T_len + t] = m + logf(l);
}

// The backward kernels' shared memory: four (64, D) tiles (queries, dO, keys, values),
// each warp's P and dS and f32 scratch, the query tile's log-sum-exps and deltas, and (dK,
// dV kernel only: key_value_bytes) each warp's f32 dK accumulator.
template <int D, typename T>
struct BackwardShared {
  T *Qs, *dOs, *Ks, *Vs, *probs, *dS;
  float *scratch, *lse, *delta, *dK;

  __device__ BackwardShared(unsigned char* shared, int warp) {
    Qs = reinterpret_cast<T*>(shared);
    dOs = Qs + kRows * Pitch<D>::row;
    Ks = dOs + kRows * Pitch<D>::row;
    Vs = Ks + kRows * Pitch<D>::row;
    T* warp_tiles = Vs + kRows * Pitch<D>::row;
    probs = warp_tiles + warp * kEdge * Pitch<D>::probs;
    dS = warp_tiles + (kWarps + warp) * kEdge * Pitch<D>::probs;
    float* floats = reinterpret_cast<float*>(warp_tiles + 2 * kWarps * kEdge * Pitch<D>::probs);
    scratch = floats + warp * kEdge * Pitch<D>::scores;
    lse = floats + kWarps * kEdge * Pitch<D>::scores;
    delta = lse + kRows;
    dK = delta + kRows + warp * kEdge * Pitch<D>::scores;
  }

  static constexpr size_t bytes() {
    return sizeof(T) * (4 * kRows * Pitch<D>::row + 2 * kWarps * kEdge * Pitch<D>::probs) +
           sizeof(float) * (kWarps * kEdge * Pitch<D>::scores + 2 * kRows);
  }
  static constexpr size_t key_value_bytes() {
    return bytes() + sizeof(float) * kWarps * kEdge * Pitch<D>::scores;
  }
};

// Loads the 64 queries from i0 of head h: q, dO, their log-sum-exps and
// delta = rowsum(dO o O) (two threads a row, each reading half the row in 16-byte pieces).
template <int D, typename T>
__device__ void load_queries(const BackwardShared<D, T>& s, const T* qkv, const T* out,
                             const T* dout, const float* lse, const AttentionLayout& L,
                             int64_t T_len, int64_t b, int64_t h, int64_t i0, int queries) {
  const int64_t width = L.H * D;
  load_rows<D>(s.Qs, qkv, queries, [&](int row) { return L.q(b, i0 + row, h); });
  load_rows<D>(s.dOs, dout, queries,
               [&](int row) { return (b * T_len + i0 + row) * width + h * D; });
  const int row = threadIdx.x >> 1, half = threadIdx.x & 1;
  constexpr int kPer = 16 / sizeof(T);
  float delta = 0.0f;
  if (row < queries) {
    const int64_t at = (b * T_len + i0 + row) * width + h * D + half * (D / 2);
    for (int c = 0; c < D / 2; c += kPer) {
      const uint4 dout_piece = *reinterpret_cast<const uint4*>(dout + at + c);
      const uint4 out_piece = *reinterpret_cast<const uint4*>(out + at + c);
      const T* dout_values = reinterpret_cast<const T*>(&dout_piece);
      const T* out_values = reinterpret_cast<const T*>(&out_piece);
#pragma unroll
      for (int e = 0; e < kPer; ++e) delta += load(dout_values[e]) * load(out_values[e]);
    }
  }
  delta += __shfl_xor_sync(kAllLanes, delta, 1);
  if (half == 0) {
    s.delta[row] = delta;
    s.lse[row] = row < queries ? lse[(b * L.H + h) * T_len + i0 + row] : 0.0f;
  }
}

// One block per (64 keys, kv head, batch): dK and dV of its keys over every query of every
// query head in the group. A warp's scores here are transposed: its 16 keys by 64 queries.
// dV stays in fragments; dK accumulates in the warp's f32 tile in shared memory (loaded,
// multiplied into and stored back per query tile, the same f32 sums): both in fragments
// need D / 2 registers a lane each, which spilled at D = 128 with the score fragments live.
template <int D, typename T>
__global__ void __launch_bounds__(kThreads, 1)
    key_value_grads_kernel(T* dqkv, const T* qkv, const T* out, const T* dout, const float* lse,
                           int64_t T_len, AttentionLayout L, SampleStarts starts, float scale) {
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane >> 1, half = lane & 1;
  const BackwardShared<D, T> s(shared, warp);
  const int64_t b = blockIdx.x, g = blockIdx.y, j0 = key_tile() * static_cast<int64_t>(kRows);
  const int keys = tile_rows<kRows>(T_len - j0);
  load_keys_values<D>(s.Ks, s.Vs, qkv, keys, L, b, j0, g);
  Accumulator dv[D / kEdge];
#pragma unroll
  for (int n = 0; n < D / kEdge; ++n) wmma::fill_fragment(dv[n], 0.0f);
  for (int i = lane; i < kEdge * Pitch<D>::scores; i += 32) s.dK[i] = 0.0f;
  const int key_row = warp * kEdge + r;
  const int64_t key = j0 + key_row;
  const T* K_warp = s.Ks + warp * kEdge * Pitch<D>::row;
  const T* V_warp = s.Vs + warp * kEdge * Pitch<D>::row;
  const float* scores = s.scratch + r * Pitch<D>::scores;
  T* probs = s.probs + r * Pitch<D>::probs;  // this lane's row of P and of dS
  T* dS = s.dS + r * Pitch<D>::probs;
  const int64_t group = L.H / L.KVH;
  for (int64_t h = g * group; h < (g + 1) * group; ++h) {
    for (int64_t i0 = j0; i0 < T_len; i0 += kRows) {
      if (starts.first_key(b, i0) >= j0 + keys) break;  // later tiles start later samples
      const int queries = tile_rows<kRows>(T_len - i0);
      __syncthreads();
      load_queries(s, qkv, out, dout, lse, L, T_len, b, h, i0, queries);
      __syncthreads();
      scores_of<D>(s.scratch, K_warp, s.Qs);  // S^T
      __syncwarp();
#pragma unroll
      for (int c = 0; c < kLaneColumns; ++c) {
        const int q = 2 * c + half;
        const bool causal =
            key_row < keys && q < queries && key <= i0 + q && key >= starts.first_key(b, i0 + q);
        probs[q] = store<T>(causal ? __expf(scores[q] * scale - s.lse[q]) : 0.0f);
      }
      __syncwarp();
      scores_of<D>(s.scratch, V_warp, s.dOs);  // dP^T
      __syncwarp();
#pragma unroll
      for (int c = 0; c < kLaneColumns; ++c) {
        const int q = 2 * c + half;
        dS[q] = store<T>(load(probs[q]) * (scores[q] - s.delta[q]));
      }
      __syncwarp();
      // dV in fragments; then dK, not unrolled, so one dK fragment is live at a time (the
      // loop head's __syncthreads orders each load with the last tile's store).
#pragma unroll
      for (int n = 0; n < D / kEdge; ++n) accumulate<D>(dv[n], s.probs, s.dOs + n * kEdge);
#pragma unroll 1
      for (int n = 0; n < D / kEdge; ++n) {
        Accumulator dk;
        wmma::load_matrix_sync(dk, s.dK + n * kEdge, Pitch<D>::scores, wmma::mem_row_major);
        accumulate<D>(dk, s.dS, s.Qs + n * kEdge);
        wmma::store_matrix_sync(s.dK + n * kEdge, dk, Pitch<D>::scores, wmma::mem_row_major);
      }
    }
  }
  write_tile_rows<D>(dqkv, s.dK, scale, warp * kEdge, keys,
                     [&](int row) { return L.k(b, j0 + row, g); });
  write_rows<D>(dqkv, dv, 1.0f, s.scratch, warp * kEdge, keys,
                [&](int row) { return L.v(b, j0 + row, g); });
}

// One block per (64 queries, head, batch): dQ of its queries over every key up to them.
template <int D, typename T>
__global__ void __launch_bounds__(kThreads)
    query_grads_kernel(T* dqkv, const T* qkv, const T* out, const T* dout, const float* lse,
                       int64_t T_len, AttentionLayout L, SampleStarts starts, float scale) {
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane >> 1, half = lane & 1;
  const BackwardShared<D, T> s(shared, warp);
  const int64_t b = blockIdx.x, h = blockIdx.y, i0 = query_tile() * static_cast<int64_t>(kRows);
  const int64_t g = h / (L.H / L.KVH);
  const int queries = tile_rows<kRows>(T_len - i0);
  load_queries(s, qkv, out, dout, lse, L, T_len, b, h, i0, queries);
  Accumulator dq[D / kEdge];
#pragma unroll
  for (int n = 0; n < D / kEdge; ++n) wmma::fill_fragment(dq[n], 0.0f);
  const int row = warp * kEdge + r;
  const int64_t query = i0 + row;
  const int64_t first_key = row < queries ? starts.first_key(b, query) : query;
  const T* Q_warp = s.Qs + warp * kEdge * Pitch<D>::row;
  const T* dO_warp = s.dOs + warp * kEdge * Pitch<D>::row;
  const float* scores = s.scratch + r * Pitch<D>::scores;
  T* probs = s.probs + r * Pitch<D>::probs;  // this lane's row of P and of dS
  T* dS = s.dS + r * Pitch<D>::probs;
  for (int64_t j0 = starts.first_key(b, i0) / kRows * kRows; j0 < i0 + queries; j0 += kRows) {
    const int keys = tile_rows<kRows>(T_len - j0);
    __syncthreads();
    load_keys_values<D>(s.Ks, s.Vs, qkv, keys, L, b, j0, g);
    __syncthreads();
    scores_of<D>(s.scratch, Q_warp, s.Ks);  // S
    __syncwarp();
    const float row_lse = s.lse[row], row_delta = s.delta[row];
#pragma unroll
    for (int c = 0; c < kLaneColumns; ++c) {
      const int j = 2 * c + half;
      const bool causal = row < queries && j < keys && j0 + j <= query && j0 + j >= first_key;
      probs[j] = store<T>(causal ? __expf(scores[j] * scale - row_lse) : 0.0f);
    }
    __syncwarp();
    scores_of<D>(s.scratch, dO_warp, s.Vs);  // dP
    __syncwarp();
#pragma unroll
    for (int c = 0; c < kLaneColumns; ++c) {
      const int j = 2 * c + half;
      dS[j] = store<T>(load(probs[j]) * (scores[j] - row_delta));
    }
    __syncwarp();
#pragma unroll
    for (int n = 0; n < D / kEdge; ++n) accumulate<D>(dq[n], s.dS, s.Ks + n * kEdge);
  }
  write_rows<D>(dqkv, dq, scale, s.scratch, warp * kEdge, queries,
                [&](int row) { return L.q(b, i0 + row, h); });
}

// f(T{}, std::integral_constant<int, D>{}) for a 16-bit dtype and a head size the kernels
// are built for; false (nothing called) otherwise.
template <typename F>
bool dispatch(DType type, int64_t D, F&& f) {
  const auto with_type = [&](auto t) {
    switch (D) {
      case 32:
        return f(t, std::integral_constant<int, 32>{});
      case 64:
        return f(t, std::integral_constant<int, 64>{});
      case 96:
        return f(t, std::integral_constant<int, 96>{});
      case 128:
        return f(t, std::integral_constant<int, 128>{});
      default:
        return false;
    }
  };
  if (type == DType::bf16) return with_type(__nv_bfloat16{});
  if (type == DType::f16) return with_type(__half{});
  return false;
}

bool aligned(std::initializer_list<const void*> tensors) {
  for (const void* p : tensors)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// The current device's per-block opt-in shared memory.
size_t shared_memory_limit() {
  int device = 0, bytes = 0;
  LLMFT_CUDA_CHECK(cudaGetDevice(&device));
  LLMFT_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<size_t>(bytes);
}

}  // namespace

bool tensor_core_attention_forward(void* out, float* lse, const void* qkv, DType type, int64_t B,
                                   int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                                   const SampleStarts& starts, cudaStream_t stream) {
  if (!aligned({out, qkv})) return false;
  return dispatch(type, D, [&](auto t, auto head_dim) {
    using S = decltype(t);
    constexpr int kD = decltype(head_dim)::value;
    constexpr size_t bytes = forward_shared_bytes<kD, S>();
    if (bytes > shared_memory_limit()) return false;
    allow_shared(forward_kernel<kD, S>, bytes);
    forward_kernel<kD, S><<<tile_grid(T, B, H), kThreads, bytes, stream>>>(
        static_cast<S*>(out), lse, static_cast<const S*>(qkv), T, AttentionLayout{R, H, KVH, D},
        starts, 1.0f / std::sqrt(static_cast<float>(D)));
    LLMFT_CUDA_LAUNCH_CHECK();
    return true;
  });
}

bool tensor_core_attention_backward(void* dqkv, const void* dout, const void* qkv, const void* out,
                                    const float* lse, DType type, int64_t B, int64_t T, int64_t H,
                                    int64_t KVH, int64_t D, const SampleStarts& starts,
                                    cudaStream_t stream) {
  if (!aligned({dqkv, dout, qkv, out})) return false;
  return dispatch(type, D, [&](auto t, auto head_dim) {
    using S = decltype(t);
    constexpr int kD = decltype(head_dim)::value;
    constexpr size_t bytes = BackwardShared<kD, S>::bytes();
    constexpr size_t key_value_bytes = BackwardShared<kD, S>::key_value_bytes();
    if (key_value_bytes > shared_memory_limit()) return false;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    const AttentionLayout L{T, H, KVH, D};
    allow_shared(key_value_grads_kernel<kD, S>, key_value_bytes);
    key_value_grads_kernel<kD, S><<<tile_grid(T, B, KVH), kThreads, key_value_bytes, stream>>>(
        static_cast<S*>(dqkv), static_cast<const S*>(qkv), static_cast<const S*>(out),
        static_cast<const S*>(dout), lse, T, L, starts, scale);
    LLMFT_CUDA_LAUNCH_CHECK();
    allow_shared(query_grads_kernel<kD, S>, bytes);
    query_grads_kernel<kD, S><<<tile_grid(T, B, H), kThreads, bytes, stream>>>(
        static_cast<S*>(dqkv), static_cast<const S*>(qkv), static_cast<const S*>(out),
        static_cast<const S*>(dout), lse, T, L, starts, scale);
    LLMFT_CUDA_LAUNCH_CHECK();
    return true;
  });
}

}  // namespace llmft::cuda
