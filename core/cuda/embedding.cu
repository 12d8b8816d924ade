// Token (+ learned position) embedding on the GPU, vocabulary-parallel as on the CPU:
// tokens outside this rank's rows [vocab_start, + rows) contribute zero.
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda/device_types.cuh"

namespace llmft::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t local_row(const int32_t* tokens, int64_t n, int64_t start,
                                             int64_t rows) {
  const int64_t row = static_cast<int64_t>(tokens[n]) - start;
  return row >= 0 && row < rows ? row : -1;
}

template <typename T>
__global__ void forward_kernel(T* out, const int32_t* tokens, const int32_t* positions,
                               const T* wte, const T* wpe, int64_t N, int64_t C,
                               int64_t vocab_start, int64_t rows) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= N * C) return;
  const int64_t n = i / C, c = i % C;
  const int64_t row = local_row(tokens, n, vocab_start, rows);
  float value = row < 0 ? 0.0f : load(wte[row * C + c]);
  if (wpe != nullptr) value += load(wpe[static_cast<int64_t>(positions[n]) * C + c]);
  out[i] = store<T>(value);
}

// table[index[n] - start] += dout[n] for the indices in [start, start + rows): the token
// table's gradient (index = tokens) and the position table's (index = positions, start 0).
// The table's gradient may be f32 while dout is 16-bit (G and T). Rows repeat across n. Block (n,
// column chunk) goes on only where n is the first with its index; its threads, a column each, then
// add the gradient rows of every n with that index to the row, in f32 and in order of n (n matched
// a tile of kThreads at a time, the tile's matches listed in order), and round once: no atomics,
// the same bits every run, the CPU's order of additions, and one rounding per row however often its
// index occurs.
template <typename G, typename T>
__global__ void scatter_backward_kernel(G* dwte, const T* dout, const int32_t* tokens, int64_t N,
                                        int64_t C, int64_t vocab_start, int64_t rows) {
  constexpr int kWarps = kThreads / 32;
  __shared__ int matches[kThreads];
  __shared__ int warp_matches[kWarps];
  const int64_t n = blockIdx.x;
  const int32_t token = tokens[n];
  const int64_t row = local_row(tokens, n, vocab_start, rows);
  if (row < 0) return;  // the whole block: another rank's row
  for (int64_t start = 0; start < n; start += kThreads) {
    const int64_t m = start + threadIdx.x;
    if (__syncthreads_or(m < n && tokens[m] == token)) return;  // an earlier position adds
  }
  const int64_t c = blockIdx.y * static_cast<int64_t>(kThreads) + threadIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float sum = c < C ? load(dwte[row * C + c]) : 0.0f;
  for (int64_t start = n; start < N; start += kThreads) {
    const int64_t m = start + threadIdx.x;
    const bool match = m < N && tokens[m] == token;
    const unsigned ballot = __ballot_sync(0xffffffffu, match);
    if (lane == 0) warp_matches[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, total = 0;
    for (int w = 0; w < kWarps; ++w) {
      before += w < warp ? warp_matches[w] : 0;
      total += warp_matches[w];
    }
    if (match) matches[before + __popc(ballot & ((1u << lane) - 1u))] = threadIdx.x;
    __syncthreads();
    if (c < C) {
      for (int i = 0; i < total; ++i) sum += load(dout[(start + matches[i]) * C + c]);
    }
    __syncthreads();  // the next tile reuses the lists
  }
  if (c < C) dwte[row * C + c] = store<G>(sum);
}

}  // namespace

void embedding_forward(void* out, const int32_t* tokens, const int32_t* positions, const void* wte,
                       const void* wpe, DType type, int64_t N, int64_t C, int64_t vocab_start,
                       int64_t rows, cudaStream_t stream) {
  if (N * C == 0) return;
  dispatch_float(type, [&](auto t) {
    using S = decltype(t);
    forward_kernel<<<blocks_for(N * C, kThreads), kThreads, 0, stream>>>(
        static_cast<S*>(out), tokens, positions, static_cast<const S*>(wte),
        static_cast<const S*>(wpe), N, C, vocab_start, rows);
  });
  LLMFT_CUDA_LAUNCH_CHECK();
}

void embedding_backward(void* dwte, void* dwpe, DType grad_type, const void* dout,
                        const int32_t* tokens, const int32_t* positions, DType type, int64_t N,
                        int64_t C, int64_t vocab_start, int64_t rows, int64_t wpe_rows,
                        cudaStream_t stream) {
  if (N * C == 0) return;
  dispatch_float(grad_type, [&](auto g) {
    dispatch_float(type, [&](auto t) {
      using G = decltype(g);
      using S = decltype(t);
      const dim3 grid(static_cast<unsigned>(N), static_cast<unsigned>(blocks_for(C, kThreads)));
      scatter_backward_kernel<<<grid, kThreads, 0, stream>>>(
          static_cast<G*>(dwte), static_cast<const S*>(dout), tokens, N, C, vocab_start, rows);
      LLMFT_CUDA_LAUNCH_CHECK();
      if (dwpe == nullptr) return;
      scatter_backward_kernel<<<grid, kThreads, 0, stream>>>(
          static_cast<G*>(dwpe), static_cast<const S*>(dout), positions, N, C, 0, wpe_rows);
      LLMFT_CUDA_LAUNCH_CHECK();
    });
  });
}

}  // namespace llmft::cuda
