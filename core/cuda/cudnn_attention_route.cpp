#include "core/cuda/cudnn_attention_route.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace llmft::cuda {
namespace {

// What LLMFT_CUDNN_ATTENTION asks for (cudnn_attention_route.h).
enum class CudnnChoice { deterministic, nondeterministic, off };

CudnnChoice choice_from_environment() {
  const char* value = std::getenv("LLMFT_CUDNN_ATTENTION");
  const std::string text = value == nullptr ? "on" : value;
  if (text == "on") return CudnnChoice::deterministic;
  if (text == "nondeterministic") return CudnnChoice::nondeterministic;
  LLMFT_REQUIRE(text == "off", "LLMFT_CUDNN_ATTENTION is '"
                                   << text
                                   << "': set it to on, nondeterministic or off (or unset it)");
  return CudnnChoice::off;
}

// The dims of a call over qkv(B, T, (H + 2 KVH) D) (the backend has checked that its
// tensors share qkv's dtype).
AttentionShape dims_of(const Tensor& qkv, int n_head, int n_kv_head) {
  const int64_t D = qkv.dim(-1) / (n_head + 2 * n_kv_head);
  return {qkv.dtype, qkv.dim(0), qkv.dim(1), n_head, n_kv_head, D};
}

bool is_f32(const Tensor& lse) {
  return lse.defined() && lse.dtype == DType::f32;
}

}  // namespace

CudnnAttentionRoute::CudnnAttentionRoute() {
  const CudnnChoice choice = choice_from_environment();
  if (!CudnnAttention::available() || choice == CudnnChoice::off) return;
  try {
    cudnn_ = std::make_unique<CudnnAttention>(choice == CudnnChoice::deterministic);
  } catch (const Error& e) {
    cudnn_failure_ = e.what();
    cudaGetLastError();  // a failed allocation must not fail the next kernel launch's check
  }
}

std::string CudnnAttentionRoute::describe() const {
  if (enabled()) return "cuDNN attention";
  if (cudnn_failure_.empty()) return "attention on our kernels";
  return "attention on our kernels (cuDNN could not start: " + cudnn_failure_ + ")";
}

void CudnnAttentionRoute::note_upload(const Tensor& dst, const void* host_src) {
  if (!enabled() || dst.dtype != DType::i32 || dst.shape.size() != 2) {
    forget(dst);
    return;
  }
  const auto* positions = static_cast<const int32_t*>(host_src);
  const int64_t B = dst.dim(0), T = dst.dim(1);
  bool one_sample = true;
  for (int64_t i = 0; i < B * T && one_sample; ++i) one_sample = positions[i] >= i % T;
  one_sample_rows_[dst.data] = one_sample;
}

void CudnnAttentionRoute::forget(const Tensor& dst) {
  one_sample_rows_.erase(dst.data);
}

bool CudnnAttentionRoute::one_sample_per_row(const Tensor& positions) const {
  const auto found = one_sample_rows_.find(positions.data);
  return found != one_sample_rows_.end() && found->second;
}

bool CudnnAttentionRoute::forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                                  int n_kv_head, int64_t first_query, cudaStream_t stream) {
  const AttentionShape dims = dims_of(qkv, n_head, n_kv_head);
  const int64_t queries = out.numel() / (dims.B * n_head * dims.D);
  const bool training_layout = first_query == 0 && queries == dims.T;
  return enabled() && training_layout && is_f32(lse) && one_sample_per_row(positions) &&
         cudnn_->forward(out.data, static_cast<float*>(lse.data), qkv.data, dims, stream);
}

AttentionWorkspaceRule CudnnAttentionRoute::rule() const {
  return enabled() ? cudnn_->rule() : AttentionWorkspaceRule::none;
}

size_t CudnnAttentionRoute::backward_workspace(Tensor qkv, Tensor positions, int n_head,
                                               int n_kv_head) const {
  if (!one_sample_per_row(positions)) return 0;
  return attention_backward_workspace_bytes(rule(), dims_of(qkv, n_head, n_kv_head));
}

bool CudnnAttentionRoute::backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                                   Tensor positions, int n_head, int n_kv_head, Tensor workspace,
                                   cudaStream_t stream) {
  const AttentionShape dims = dims_of(qkv, n_head, n_kv_head);
  return enabled() && is_f32(lse) && one_sample_per_row(positions) && workspace.defined() &&
         cudnn_->backward(dqkv.data, dout.data, qkv.data, out.data,
                          static_cast<const float*>(lse.data), dims, workspace.data,
                          workspace.bytes(), stream);
}

}  // namespace llmft::cuda
