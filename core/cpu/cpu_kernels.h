// Plain CPU kernels on f32 host arrays, in the spirit of llm.c: one function per
// forward or backward, shapes in comments, OpenMP across independent rows and
// OpenBLAS sgemm for every matrix product. CpuBackend adapts Tensors to these.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace llmft::cpu {

// out(N, OC) = inp(N, C) @ weight(OC, C)^T + bias(OC) (bias may be null)
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int64_t N,
                    int64_t C, int64_t OC);
// dinp(N, C) (+)= dout @ weight; dweight(OC, C) += dout^T @ inp; dbias(OC) += colsum(dout)
void linear_backward(float* dinp, bool accumulate_dinp, float* dweight, float* dbias,
                     const float* dout, const float* inp, const float* weight, int64_t N, int64_t C,
                     int64_t OC);

// out(N, C) = wte[tokens[n] - vocab_start] + wpe[positions[n]] (wpe may be null).
// Tokens outside wte's rows vocab_start .. vocab_start + rows - 1 (held by another
// tensor-parallel rank) contribute zero.
void embedding_forward(float* out, const int32_t* tokens, const int32_t* positions,
                       const float* wte, const float* wpe, int64_t N, int64_t C,
                       int64_t vocab_start, int64_t rows);
void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                        const int32_t* positions, int64_t N, int64_t C, int64_t vocab_start,
                        int64_t rows);

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int64_t N, int64_t C, float eps);
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        int64_t N, int64_t C);

// Causal attention, scale 1/sqrt(D), over qkv(B, R, (H + 2 KVH) D): the T queries are rows
// first_query .. first_query + T - 1 and query t attends to rows from the start of its
// sample, first_query + t - positions[b, t], to its own (R >= first_query + T; training has
// R = T and first_query 0, decoding with a KV cache has the cache's rows).
// out(B, T, H D), lse(B, H, T), positions(B, T).
void attention_forward(float* out, float* lse, const float* qkv, const int32_t* positions,
                       int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                       int64_t first_query);
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, const int32_t* positions, int64_t B, int64_t T, int64_t H,
                        int64_t KVH, int64_t D);

// RMSNorm: out(N, C) = inp * rstd * weight; rstd(N) kept for backward.
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int64_t N,
                     int64_t C, float eps);
// dinp(N, C) += ...; dweight(C) += ...
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                      const float* weight, const float* rstd, int64_t N, int64_t C);
// Rotary embedding in place on the q and k heads of qkv(N, (H + 2 KVH) D): pair i of row n
// turns by positions[n] * inv_freq[i] (D / 2 frequencies); backward applies the inverse
// rotation to their gradients.
void rope_forward(float* qkv, const int32_t* positions, int64_t N, int64_t H, int64_t KVH,
                  int64_t D, const float* inv_freq);
void rope_backward(float* dqkv, const int32_t* positions, int64_t N, int64_t H, int64_t KVH,
                   int64_t D, const float* inv_freq);
// out(N, I) = silu(gate) * up, gate_up(N, 2I) = [gate | up] per row.
void swiglu_forward(float* out, const float* gate_up, int64_t N, int64_t I);
void swiglu_backward(float* dgate_up, const float* gate_up, const float* dout, int64_t N,
                     int64_t I);

void gelu_forward(float* out, const float* inp, int64_t n);
void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n);

// Cross-entropy over this rank's vocabulary slice (Backend::cross_entropy_*): logits(N, V)
// are entries vocab_start + v, the first `valid` real; stats(3, N).
void cross_entropy_max(float* stats, const float* logits, int64_t N, int64_t V, int64_t valid);
void cross_entropy_sums(float* stats, float* logits, const int32_t* targets, int64_t N, int64_t V,
                        int64_t valid, int64_t vocab_start);
// Returns the sum of the rows' losses (targets >= 0).
double cross_entropy_finish(float* logits, const float* stats, const int32_t* targets, int64_t N,
                            int64_t V, int64_t vocab_start, float grad_scale);

void adamw_update(float* param, const void* grad, DType grad_type, float* m, float* v, int64_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float grad_scale, float bias_correction1, float bias_correction2);
// param (any float dtype, updated in place through f32 registers) -= ...
void sgd_update(void* param, DType param_type, const void* grad, DType grad_type,
                float* momentum_buf, int64_t n, float lr, float momentum, float weight_decay,
                float grad_scale);
// AdaLomo's passes (Backend::adalomo_*) on a slice of `rows` x `cols` (cols == 0: a
// vector of `rows`) of a tensor whose whole has full_rows x full_cols (full_numel)
// elements; stats(3) = row-state total, sum of update^2, sum of param^2.
void adalomo_square_sums(float* row_sums, float* col_sums, const void* grad, DType grad_type,
                         int64_t rows, int64_t cols, float grad_scale);
void adalomo_moments(float* row_state, float* col_state, float* stats, const float* row_sums,
                     const float* col_sums, int64_t rows, int64_t cols, int64_t full_rows,
                     int64_t full_cols, float beta2);
void adalomo_norms(float* stats, const void* param, DType param_type, const void* grad,
                   DType grad_type, const float* row_state, const float* col_state, int64_t rows,
                   int64_t cols, int64_t full_rows, float grad_scale);
void adalomo_apply(void* param, DType param_type, const void* grad, DType grad_type,
                   const float* row_state, const float* col_state, const float* stats, int64_t rows,
                   int64_t cols, int64_t full_rows, int64_t full_numel, float lr,
                   float weight_decay, float grad_scale);

}  // namespace llmft::cpu
