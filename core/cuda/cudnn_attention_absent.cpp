// CudnnAttention in a build without cuDNN (core/cuda/cudnn_attention.h): it holds nothing
// and declines every call, so the backend runs our own attention kernels. Compiled only
// when CMake's LLMFT_CUDNN is off.
#include "core/cuda/cudnn_attention.h"

namespace llmft::cuda {

struct CudnnAttention::Graphs {};

bool CudnnAttention::available() {
  return false;
}

bool CudnnAttention::pads_document_counts() {
  return false;
}

CudnnAttention::CudnnAttention(bool) : rule_(AttentionWorkspaceRule::none) {}
CudnnAttention::~CudnnAttention() = default;

bool CudnnAttention::forward(void*, float*, const void*, const AttentionShape&, CudaStream) {
  return false;
}

bool CudnnAttention::backward(void*, const void*, const void*, const void*, const float*,
                              const AttentionShape&, void*, size_t, CudaStream) {
  return false;
}

bool CudnnAttention::forward_documents(void*, float*, const void*, const AttentionShape&,
                                       const std::vector<AttentionDocument>&, CudaStream) {
  return false;
}

bool CudnnAttention::backward_documents(void*, const void*, const void*, const void*, const float*,
                                        const AttentionShape&,
                                        const std::vector<AttentionDocument>&, void*, size_t,
                                        CudaStream) {
  return false;
}

int64_t CudnnAttention::workspace_needed(const AttentionShape&, bool) {
  return -1;
}

std::string CudnnAttention::why_declined(const AttentionShape&, bool) {
  return "this build has no cuDNN (LLMFT_CUDNN off)";
}

}  // namespace llmft::cuda
