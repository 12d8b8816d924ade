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
  forget(dst);
  if (!enabled() || dst.dtype != DType::i32 || dst.shape.size() != 2) return;
  auto documents =
      attention_documents(static_cast<const int32_t*>(host_src), dst.dim(0), dst.dim(1));
  if (documents) documents_[dst.data] = std::move(*documents);
}

void CudnnAttentionRoute::forget(const Tensor& dst) {
  documents_.erase(dst.data);
  packed_lse_.erase(dst.data);
}

const std::vector<AttentionDocument>* CudnnAttentionRoute::documents_of(
    const Tensor& positions) const {
  const auto found = documents_.find(positions.data);
  return found == documents_.end() ? nullptr : &found->second;
}

bool CudnnAttentionRoute::forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                                  int n_kv_head, int64_t first_query, cudaStream_t stream) {
  packed_lse_.erase(lse.data);
  const AttentionShape dims = dims_of(qkv, n_head, n_kv_head);
  const int64_t queries = out.numel() / (dims.B * n_head * dims.D);
  const bool training_layout = first_query == 0 && queries == dims.T;
  const std::vector<AttentionDocument>* documents = documents_of(positions);
  if (!enabled() || !training_layout || !is_f32(lse) || documents == nullptr) return false;
  auto* stats = static_cast<float*>(lse.data);
  if (one_document_per_row(*documents, dims.B)) {
    return cudnn_->forward(out.data, stats, qkv.data, dims, stream);
  }
  if (!cudnn_->forward_documents(out.data, stats, qkv.data, dims, *documents, stream)) return false;
  packed_lse_.insert(lse.data);
  return true;
}

AttentionWorkspaceRule CudnnAttentionRoute::rule() const {
  return enabled() ? cudnn_->rule() : AttentionWorkspaceRule::none;
}

size_t CudnnAttentionRoute::backward_workspace(Tensor qkv, Tensor positions, int n_head,
                                               int n_kv_head) const {
  if (documents_of(positions) == nullptr) return 0;
  return attention_backward_workspace_bytes(rule(), dims_of(qkv, n_head, n_kv_head));
}

bool CudnnAttentionRoute::backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                                   Tensor positions, int n_head, int n_kv_head, Tensor workspace,
                                   cudaStream_t stream) {
  const AttentionShape dims = dims_of(qkv, n_head, n_kv_head);
  const std::vector<AttentionDocument>* documents = documents_of(positions);
  const auto* stats = static_cast<const float*>(lse.data);
  if (packed_lse_.count(lse.data) > 0) {
    // Our kernels cannot read these statistics: cuDNN must run this backward.
    LLMFT_REQUIRE(
        documents != nullptr && workspace.defined() &&
            cudnn_->backward_documents(dqkv.data, dout.data, qkv.data, out.data, stats, dims,
                                       *documents, workspace.data, workspace.bytes(), stream),
        "internal: cuDNN ran an attention forward over packed samples, but not its "
        "backward (positions changed in between, or no workspace was given)");
    return true;
  }
  return enabled() && is_f32(lse) && documents != nullptr &&
         one_document_per_row(*documents, dims.B) && workspace.defined() &&
         cudnn_->backward(dqkv.data, dout.data, qkv.data, out.data, stats, dims, workspace.data,
                          workspace.bytes(), stream);
}

}  // namespace llmft::cuda
