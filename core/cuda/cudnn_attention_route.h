// CudnnAttentionRoute: which attention calls of the CUDA backend go to cuDNN
// (core/cuda/cudnn_attention.h) rather than our own kernels. cuDNN takes the training
// layout (R = T, first_query 0) where the positions describe whole documents
// (core/attention_documents.h): rows of one sample each run as a batch of rows, rows of
// packed samples as cuDNN's ragged documents. Positions live on the device; the route
// learns them on the host, when the backend uploads a (B, T) i32 tensor
// (note_upload), and forgets a tensor that is overwritten on the device (forget): positions
// it has not seen uploaded go to our kernels. This costs no synchronisation.
//
// A forward over packed documents leaves its statistics in cuDNN's packed order, which
// our kernels cannot read: the route remembers which lse tensors hold them, and their
// backward must run on cuDNN (CudnnAttention takes such a forward only when it can).
//
// LLMFT_CUDNN_ATTENTION (environment): "on" or unset, cuDNN where it takes the call, with
// its deterministic backward; "nondeterministic", its faster backward (dQ summed with
// atomics, so runs no longer repeat bit for bit; its workspace grows as T, the
// deterministic one's as T^2: core/attention_workspace.h);
// "off", every call to our kernels and nothing allocated. Where cuDNN cannot start (its
// handle or workspace fails) every call goes to our kernels, and describe() says why. The
// backward's workspace comes from the caller (backward_workspace), for the memory model.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/cuda/cudnn_attention.h"
#include "core/tensor.h"

namespace llmft::cuda {

class CudnnAttentionRoute {
 public:
  CudnnAttentionRoute();

  // Whether cuDNN may run attention here (built in and not turned off).
  bool enabled() const { return cudnn_ != nullptr; }
  // "cuDNN attention" or "attention on our kernels" (with why, where cuDNN could not
  // start), for the backend's describe().
  std::string describe() const;

  void note_upload(const Tensor& dst, const void* host_src);
  void forget(const Tensor& dst);

  // As Backend::attention_forward / attention_backward: true when cuDNN queued the call.
  bool forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head, int n_kv_head,
               int64_t first_query, cudaStream_t stream);
  // workspace: at least backward_workspace() bytes (cuDNN declines a call without).
  bool backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse, Tensor positions,
                int n_head, int n_kv_head, Tensor workspace, cudaStream_t stream);
  // As Backend::attention_workspace_rule / attention_backward_workspace.
  AttentionWorkspaceRule rule() const;
  size_t backward_workspace(Tensor qkv, Tensor positions, int n_head, int n_kv_head) const;

 private:
  // The documents of uploaded positions, or null where they are not whole documents or
  // were not seen uploaded.
  const std::vector<AttentionDocument>* documents_of(const Tensor& positions) const;

  std::unique_ptr<CudnnAttention> cudnn_;
  std::string cudnn_failure_;  // why cuDNN could not start ("" if it did or was not asked)
  // Uploaded (B, T) i32 tensors holding whole documents, by address.
  std::unordered_map<const void*, std::vector<AttentionDocument>> documents_;
  // lse tensors a forward over packed documents wrote, in cuDNN's packed order.
  std::unordered_set<const void*> packed_lse_;
};

}  // namespace llmft::cuda
