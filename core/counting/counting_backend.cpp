#include "core/counting/counting_backend.h"

#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace llmft {

CountingMemory::~CountingMemory() {
  for (const auto& [address, bytes] : real_) std::free(reinterpret_cast<void*>(address));
}

void* CountingMemory::allocate(size_t bytes) {
  if (bytes <= kRealBytes) {
    void* ptr = std::calloc(1, bytes > 0 ? bytes : 1);
    LLMFT_REQUIRE(ptr != nullptr,
                  "counting device: the host could not provide " << bytes << " bytes");
    real_[reinterpret_cast<uintptr_t>(ptr)] = bytes;
    return ptr;
  }
  void* ptr = reinterpret_cast<void*>(next_address_);
  next_address_ += bytes;
  return ptr;
}

void CountingMemory::release(void* ptr, size_t) {
  const auto it = real_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == real_.end()) return;
  std::free(ptr);
  real_.erase(it);
}

bool CountingMemory::is_real(const void* ptr) const {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = real_.upper_bound(address);
  if (it == real_.begin()) return false;
  --it;
  return address < it->first + it->second;
}

std::string CountingBackend::describe() const {
  return std::string("counting (no kernels, addresses without memory; compute rule ") +
         (rule_ == ComputeRule::f32 ? "f32" : "stored") + ")";
}

void CountingBackend::copy_to_device(Tensor dst, const void* host_src) {
  kernel(KernelKind::copy, dst);
  if (memory_.is_real(dst.data)) std::memcpy(dst.data, host_src, dst.bytes());
}

void CountingBackend::copy_to_host(void* host_dst, Tensor src) {
  kernel(KernelKind::copy, src);
  if (memory_.is_real(src.data)) {
    std::memcpy(host_dst, src.data, src.bytes());
  } else {
    std::memset(host_dst, 0, src.bytes());
  }
}

void CountingBackend::copy(Tensor dst, Tensor src) {
  kernel(KernelKind::copy, dst, src);
  if (memory_.is_real(dst.data) && memory_.is_real(src.data)) {
    std::memcpy(dst.data, src.data, src.bytes());
  }
}

void CountingBackend::linear_forward(Tensor out, Tensor, Tensor weight, Tensor bias) {
  const int64_t outputs = weight.shape[0], inputs = weight.shape[1];
  const int64_t rows = out.numel() / outputs;
  tally_.add_gemm(rows, {rows, outputs, inputs});
  if (bias.defined()) kernel(KernelKind::copy, out, bias);  // the bias is written first
}

void CountingBackend::linear_backward(Tensor dinp, bool, Tensor dweight, Tensor dbias, Tensor dout,
                                      Tensor, Tensor weight) {
  const int64_t outputs = weight.shape[0], inputs = weight.shape[1];
  const int64_t rows = dout.numel() / outputs;
  if (dinp.defined()) tally_.add_gemm(rows, {rows, inputs, outputs});
  // The weight's gradient: outputs x inputs, summed over the rows.
  if (dweight.defined()) tally_.add_gemm(rows, {outputs, inputs, rows});
  if (dbias.defined()) kernel(KernelKind::reduction, dbias, dout);
}

void CountingBackend::attention_forward(Tensor out, Tensor, Tensor qkv, Tensor, int n_head,
                                        int n_kv_head, int64_t) {
  const int64_t batch = qkv.shape[0], head_dim = qkv.shape[2] / (n_head + 2 * n_kv_head);
  const int64_t queries = out.numel() / (batch * n_head * head_dim);
  tally_.add_attention({batch, queries, n_head, n_kv_head, head_dim, false});
}

size_t CountingBackend::attention_backward_workspace(Tensor qkv, Tensor, int n_head,
                                                     int n_kv_head) {
  const int64_t head_dim = qkv.shape[2] / (n_head + 2 * n_kv_head);
  return attention_backward_workspace_bytes(
      attention_rule_, {qkv.dtype, qkv.shape[0], qkv.shape[1], n_head, n_kv_head, head_dim});
}

void CountingBackend::attention_backward(Tensor, Tensor, Tensor qkv, Tensor, Tensor, Tensor,
                                         int n_head, int n_kv_head, Tensor) {
  const int64_t head_dim = qkv.shape[2] / (n_head + 2 * n_kv_head);
  tally_.add_attention({qkv.shape[0], qkv.shape[1], n_head, n_kv_head, head_dim, true});
}

}  // namespace llmft
