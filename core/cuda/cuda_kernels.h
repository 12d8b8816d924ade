// The CUDA backend's kernel launchers: host functions that queue our own kernels on a
// stream. Tensors are device pointers with their dtype; activations and weights come in
// the run's compute dtype (core/compute_dtype.h), statistics in f32. Shapes follow
// core/backend.h, whose hooks these implement. Every reduction adds in a fixed order (no
// atomics), so results do not depend on scheduling: the same bits run to run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"
#include "core/rope_frequencies.h"

namespace llmft::cuda {

// --- kernel_image.cu ---
// cudaSuccess when the current device can run this build's kernels;
// cudaErrorNoKernelImageForDevice when the build has no code for it.
cudaError_t kernel_image_status();

// --- dtype_kernels.cu ---
void fill(void* x, DType type, float value, int64_t n, cudaStream_t stream);
void convert(void* dst, DType dst_type, const void* src, DType src_type, int64_t n,
             cudaStream_t stream);
// acc += x, rounded once into acc's dtype.
void add_inplace(void* acc, DType acc_type, const void* x, DType x_type, int64_t n,
                 cudaStream_t stream);
// *sum_sq (f32) += sum of x^2, through `partials` (kSumBlocks doubles of scratch).
// kSumBlocks blocks of 256 threads fill a 132-multiprocessor GPU (eight a multiprocessor):
// a quarter of that left most of its memory bandwidth idle. The figure is fixed, so the
// order of the additions, and the bits, are the same on every GPU; it is at most 1024, the
// threads of the one block that adds the partial sums.
constexpr int kSumBlocks = 1024;
static_assert(kSumBlocks % 32 == 0 && kSumBlocks <= 1024, "one block of whole warps adds them");
void sum_squares(float* sum_sq, const void* x, DType type, int64_t n, double* partials,
                 cudaStream_t stream);
// out(C) += sum over the N rows of x(N, C).
void add_column_sums(void* out, DType out_type, const void* x, DType x_type, int64_t N, int64_t C,
                     cudaStream_t stream);
// Each of `rows` rows of out (row stride ld) = row(cols), all of one dtype.
void repeat_rows(void* out, int64_t ld, const void* row, DType type, int64_t rows, int64_t cols,
                 cudaStream_t stream);

// --- embedding.cu ---
// positions(N): each token's row of wpe; wpe_rows: the rows of dwpe.
void embedding_forward(void* out, const int32_t* tokens, const int32_t* positions, const void* wte,
                       const void* wpe, DType type, int64_t N, int64_t C, int64_t vocab_start,
                       int64_t rows, cudaStream_t stream);
// dwte and dwpe in grad_type: `type` or f32.
void embedding_backward(void* dwte, void* dwpe, DType grad_type, const void* dout,
                        const int32_t* tokens, const int32_t* positions, DType type, int64_t N,
                        int64_t C, int64_t vocab_start, int64_t rows, int64_t wpe_rows,
                        cudaStream_t stream);

// --- norms.cu ---
void layernorm_forward(void* out, float* mean, float* rstd, const void* inp, const void* weight,
                       const void* bias, DType type, int64_t N, int64_t C, float eps,
                       cudaStream_t stream);
// The backwards' dweight (and dbias) in grad_type: `type` or f32.
void layernorm_backward(void* dinp, void* dweight, void* dbias, DType grad_type, const void* dout,
                        const void* inp, const void* weight, const float* mean, const float* rstd,
                        DType type, int64_t N, int64_t C, cudaStream_t stream);
void rmsnorm_forward(void* out, float* rstd, const void* inp, const void* weight, DType type,
                     int64_t N, int64_t C, float eps, cudaStream_t stream);
// residual(N, C) += x, rounded once into residual's dtype; then out = the norm of the
// rounded residual, exactly as layernorm_forward / rmsnorm_forward compute it from the
// stored residual (the same bits; mean/rstd f32 as they write). All tensors in `type`. Rows
// of up to 16384 read residual and x once and write residual and out once per element;
// wider ones run add_inplace, then the norm.
void residual_layernorm_forward(void* residual, const void* x, void* out, float* mean, float* rstd,
                                const void* weight, const void* bias, DType type, int64_t N,
                                int64_t C, float eps, cudaStream_t stream);
void residual_rmsnorm_forward(void* residual, const void* x, void* out, float* rstd,
                              const void* weight, DType type, int64_t N, int64_t C, float eps,
                              cudaStream_t stream);
void rmsnorm_backward(void* dinp, void* dweight, DType grad_type, const void* dout, const void* inp,
                      const void* weight, const float* rstd, DType type, int64_t N, int64_t C,
                      cudaStream_t stream);

// --- rope.cu --- (inverse: the transposed rotation backward applies)
// freqs travels by value in the kernel's parameters.
// Row n of qkv(N, (H + 2 KVH) D) turns by positions[n].
void rope(void* qkv, const int32_t* positions, DType type, int64_t N, int64_t H, int64_t KVH,
          int64_t D, const RopeFrequencies& freqs, bool inverse, cudaStream_t stream);

// --- activations.cu ---
void gelu_forward(void* out, const void* inp, DType type, int64_t n, cudaStream_t stream);
void gelu_backward(void* dinp, const void* inp, const void* dout, DType type, int64_t n,
                   cudaStream_t stream);
void swiglu_forward(void* out, const void* gate_up, DType type, int64_t N, int64_t I,
                    cudaStream_t stream);
void swiglu_backward(void* dgate_up, const void* gate_up, const void* dout, DType type, int64_t N,
                     int64_t I, cudaStream_t stream);

// --- attention.cu ---
// The largest head size the kernels hold in registers.
constexpr int kMaxHeadDim = 128;
// positions(B, T): query t sees keys from first_query + t - positions[b, t] to its own row.
void attention_forward(void* out, float* lse, const void* qkv, const int32_t* positions, DType type,
                       int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                       int64_t first_query, cudaStream_t stream);
void attention_backward(void* dqkv, const void* dout, const void* qkv, const void* out,
                        const float* lse, const int32_t* positions, DType type, int64_t B,
                        int64_t T, int64_t H, int64_t KVH, int64_t D, cudaStream_t stream);

// --- cross_entropy.cu --- (stats(3, N) f32 as core/backend.h says)
void cross_entropy_max(float* stats, const void* logits, DType type, int64_t N, int64_t V,
                       int64_t valid, cudaStream_t stream);
void cross_entropy_sums(float* stats, const void* logits, const int32_t* targets, DType type,
                        int64_t N, int64_t V, int64_t valid, int64_t vocab_start,
                        cudaStream_t stream);
// Writes each row's loss into stats[0] (its maxima are used up) and adds their sum to
// *loss_sum.
void cross_entropy_finish(void* logits, float* loss_sum, float* stats, const int32_t* targets,
                          DType type, int64_t N, int64_t V, int64_t valid, int64_t vocab_start,
                          float grad_scale, cudaStream_t stream);

// --- optimizers.cu ---
void adamw_update(float* param, const void* grad, DType grad_type, float* m, float* v, int64_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float grad_scale, float bias_correction1, float bias_correction2,
                  cudaStream_t stream);
void sgd_update(void* param, DType param_type, const void* grad, DType grad_type,
                float* momentum_buf, int64_t n, float lr, float momentum, float weight_decay,
                float grad_scale, cudaStream_t stream);

// --- adalomo.cu --- (the four passes of core/backend.h; cols 0: a vector)
void adalomo_square_sums(float* row_sums, float* col_sums, const void* grad, DType grad_type,
                         int64_t rows, int64_t cols, float grad_scale, cudaStream_t stream);
void adalomo_moments(float* row_state, float* col_state, float* stats, const float* row_sums,
                     const float* col_sums, int64_t rows, int64_t cols, int64_t full_rows,
                     int64_t full_cols, float beta2, cudaStream_t stream);
void adalomo_norms(float* stats, const void* param, DType param_type, const void* grad,
                   DType grad_type, const float* row_state, const float* col_state, int64_t rows,
                   int64_t cols, int64_t full_rows, float grad_scale, double* partials,
                   cudaStream_t stream);
void adalomo_apply(void* param, DType param_type, const void* grad, DType grad_type,
                   const float* row_state, const float* col_state, const float* stats, int64_t rows,
                   int64_t cols, int64_t full_rows, int64_t full_numel, float lr,
                   float weight_decay, float grad_scale, cudaStream_t stream);

}  // namespace llmft::cuda
