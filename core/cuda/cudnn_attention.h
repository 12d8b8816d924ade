// CudnnAttention: causal self-attention through cuDNN's fused SDPA (flash attention,
// forward and backward, grouped-query heads, bf16/fp16) built with the cudnn-frontend graph
// API, for the training layout of core/backend.h (R = T, first_query 0, one sample per
// row). Each call returns true having queued its work, or false having queued nothing when
// cuDNN does not take it (f32, a head size or shape it refuses, a plan needing more
// workspace than kWorkspaceBytes, pointers not 16-byte aligned, a build without cuDNN);
// the caller then runs our own kernels (core/cuda/attention*.cu). Forward writes the lse
// our kernels write (cuDNN's softmax statistics: the natural-log log-sum-exp of the scaled
// scores, (B, H, T) f32), so either backward reads either forward's. The backward asks
// cuDNN for its deterministic algorithm unless told otherwise: runs then repeat bit for
// bit, as with our kernels.
//
// Built graphs are kept per shape and dtype. The workspace is one buffer of
// kWorkspaceBytes allocated at construction (with the handle), so that the backend counts
// it in its fixed overhead as it does cuBLASLt's; plans that need more are not chosen.
//
// Two implementations, chosen by CMake (LLMFT_CUDNN): cudnn_attention.cpp with cuDNN and
// cudnn_attention_absent.cpp without, where available() is false and every call declines.
// Thread-safety: one thread (one handle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"

// cudaStream_t's pointee, declared so that code built without CUDA's headers (the GPU
// tests, which every build compiles) can include this header.
struct CUstream_st;

namespace llmft::cuda {

using CudaStream = CUstream_st*;  // cudaStream_t

// The shape of one attention call: qkv(B, T, (H + 2 KVH) D), out(B, T, H D), lse(B, H, T).
struct AttentionDims {
  DType type;
  int64_t B, T, H, KVH, D;
};

class CudnnAttention {
 public:
  // The workspace bound: cudnn-frontend's own cap on the SDPA backward's workspace
  // (CUDNN_FRONTEND_ATTN_DP_WORKSPACE_LIMIT's default, 256 MiB). The deterministic Hopper
  // backward needs B H T^2 2 bytes (its dP matrix), 256 MiB at B 1, H 32, T 2048; the
  // non-deterministic one B H T (D + 1) 4 bytes (dQ's f32 accumulator and the softmax
  // sums).
  static constexpr size_t kWorkspaceBytes = size_t{256} << 20;

  // Whether this build has cuDNN attention.
  static bool available();

  // Creates the handle and the workspace (nothing without cuDNN). deterministic: the
  // backward's algorithm (else cuDNN's faster one, which adds dQ's parts atomically).
  explicit CudnnAttention(bool deterministic = true);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  bool forward(void* out, float* lse, const void* qkv, const AttentionDims& dims,
               CudaStream stream);
  bool backward(void* dqkv, const void* dout, const void* qkv, const void* out, const float* lse,
                const AttentionDims& dims, CudaStream stream);

  // The workspace cuDNN's plan for this call asks for; -1 when cuDNN does not take it.
  int64_t workspace_needed(const AttentionDims& dims, bool backward);
  // Why cuDNN does not take this call ("" when it does).
  std::string why_declined(const AttentionDims& dims, bool backward);

 private:
  struct Graphs;
  std::unique_ptr<Graphs> graphs_;
};

}  // namespace llmft::cuda
