// CudnnAttention: causal self-attention through cuDNN's fused SDPA (flash attention,
// forward and backward, grouped-query heads, bf16/fp16) built with the cudnn-frontend graph
// API, for the training layout of core/backend.h (R = T, first_query 0, one sample per
// row). Each call returns true having queued its work, or false having queued nothing when
// cuDNN does not take it (f32, a head size or shape it refuses, a plan needing more
// workspace than it is given, pointers not 16-byte aligned, a build without cuDNN); the
// caller then runs our own kernels (core/cuda/attention*.cu). Forward writes the lse our
// kernels write (cuDNN's softmax statistics: the natural-log log-sum-exp of the scaled
// scores, (B, H, T) f32), so either backward reads either forward's. The backward asks
// cuDNN for its deterministic algorithm unless told otherwise: runs then repeat bit for
// bit, as with our kernels.
//
// Packed samples (rows of several documents, core/attention_documents.h) run through
// cuDNN's ragged layout: each call's batch is a chunk of documents, found by ragged offsets
// into the rows, with a padding mask for their lengths and the causal mask within each.
// Their softmax statistics are then in cuDNN's packed token-major order, lse[token H +
// head], which only this class's backward reads; forward_documents takes a call only when
// every chunk's backward graph builds as well, so that such a forward is always followed by
// a backward that can read them. The documents' lengths and offsets go to the device in a
// table of kDocumentTableBytes, allocated with the handle; more documents than it holds are
// declined. cuDNN 9.19 refuses the ragged statistics' backward and the deterministic
// ragged backward on sm_8x and sm_12x: packed rows run there on our kernels (Hopper and
// data-centre Blackwell take them).
//
// Built graphs are kept per shape and dtype. The forward's small workspace is allocated
// with the handle and counted in the backend's fixed overhead, as cuBLASLt's is; the
// backward's comes from the caller, sized by core/attention_workspace.h's bound (so the
// memory model charges it), and the backward takes the batch in that file's chunks of rows.
//
// Two implementations, chosen by CMake (LLMFT_CUDNN): cudnn_attention.cpp with cuDNN and
// cudnn_attention_absent.cpp without, where available() is false and every call declines.
// Thread-safety: one thread (one handle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attention_documents.h"
#include "core/attention_workspace.h"

// cudaStream_t's pointee, declared so that code built without CUDA's headers (the GPU
// tests, which every build compiles) can include this header.
struct CUstream_st;

namespace llmft::cuda {

using CudaStream = CUstream_st*;  // cudaStream_t

class CudnnAttention {
 public:
  // The forward's workspace: cuDNN 9.19's forward plans asked 256 B at every shape
  // gpu_check runs; plans that need more are not chosen.
  static constexpr size_t kForwardWorkspaceBytes = size_t{1} << 20;
  // The device table of packed documents' lengths and ragged offsets: 28 bytes and more a
  // document (padding included), so some 18,000 documents a micro-batch.
  static constexpr size_t kDocumentTableBytes = size_t{1} << 20;

  // Whether this build has cuDNN attention.
  static bool available();
  // Whether calls over packed documents round their document count up to a power of two
  // with empty documents (cuDNN 9.25 on takes empty sequences; before it, each count a run
  // meets builds its own graphs).
  static bool pads_document_counts();

  // Creates the handle and the forward's workspace (nothing without cuDNN). deterministic:
  // the backward's algorithm (else cuDNN's faster one, which adds dQ's parts atomically).
  explicit CudnnAttention(bool deterministic = true);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // The backward's workspace rule (core/attention_workspace.h).
  AttentionWorkspaceRule rule() const { return rule_; }

  bool forward(void* out, float* lse, const void* qkv, const AttentionShape& shape,
               CudaStream stream);
  // workspace: workspace_bytes from the caller, which must hold the rule's bound for the
  // shape (attention_backward_workspace_bytes) for cuDNN to take the call.
  bool backward(void* dqkv, const void* dout, const void* qkv, const void* out, const float* lse,
                const AttentionShape& shape, void* workspace, size_t workspace_bytes,
                CudaStream stream);

  // As forward and backward over the `documents` of packed rows (shape: the rows); lse in
  // cuDNN's token-major order. backward_documents's workspace is the one the rows unpacked
  // would get (attention_backward_workspace_bytes).
  bool forward_documents(void* out, float* lse, const void* qkv, const AttentionShape& shape,
                         const std::vector<AttentionDocument>& documents, CudaStream stream);
  bool backward_documents(void* dqkv, const void* dout, const void* qkv, const void* out,
                          const float* lse, const AttentionShape& shape,
                          const std::vector<AttentionDocument>& documents, void* workspace,
                          size_t workspace_bytes, CudaStream stream);

  // The workspace cuDNN's plan for this call asks for (backward: for its first chunk of
  // rows, the largest); -1 when cuDNN does not take it.
  int64_t workspace_needed(const AttentionShape& shape, bool backward);
  // Why cuDNN does not take this call ("" when it does).
  std::string why_declined(const AttentionShape& shape, bool backward);

 private:
  struct Graphs;
  AttentionWorkspaceRule rule_;
  std::unique_ptr<Graphs> graphs_;
};

}  // namespace llmft::cuda
