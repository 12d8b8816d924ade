#include "core/cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/byte_size.h"
#include "core/cpu/blas_kernel.h"
#include "core/cpu/cpu_event.h"
#include "core/cpu/cpu_kernels.h"
#include "core/cpu/dtype_kernels.h"
#include "core/cpu/host_blocks.h"
#include "core/error.h"

namespace llmft {

namespace {

float* f32(const Tensor& t) {
  if (!t.defined()) return nullptr;
  LLMFT_REQUIRE(t.dtype == DType::f32,
                "cpu backend: kernel expects fp32, got " << dtype_name(t.dtype));
  return static_cast<float*>(t.data);
}

const int32_t* i32(const Tensor& t) {
  LLMFT_REQUIRE(t.dtype == DType::i32, "cpu backend: token tensor must be i32");
  return static_cast<const int32_t*>(t.data);
}

// Rows and width of a tensor seen as (N, last dim).
int64_t rows(const Tensor& t) {
  return t.dim(-1) == 0 ? 0 : t.numel() / t.dim(-1);  // a slice of no columns has no rows
}

}  // namespace

CpuMemory::~CpuMemory() {
  for (auto& [bytes, blocks] : cached_) {
    for (void* ptr : blocks) std::free(ptr);
  }
}

void* CpuMemory::allocate(size_t bytes) {
  auto it = cached_.find(bytes);
  if (it != cached_.end() && !it->second.empty()) {
    void* ptr = it->second.back();
    it->second.pop_back();
    return ptr;
  }
  void* ptr = cpu::allocate_host_block(bytes);
  if (ptr == nullptr) {
    LLMFT_FAIL("cpu: the host could not provide "
               << format_bytes(bytes) << "; lower --micro-batch or use a smaller model");
  }
  return ptr;
}

void CpuMemory::release(void* ptr, size_t bytes) {
  cached_[bytes].push_back(ptr);
}

CpuBackend::CpuBackend() {
  cpu::select_blas_kernel();
}

std::string CpuBackend::describe() const {
  return "cpu, " + std::to_string(omp_get_max_threads()) + " threads per rank; BLAS " +
         cpu::blas_description() + "; " + cpu::host_pages_description();
}

std::unique_ptr<Event> CpuBackend::create_event() {
  return std::make_unique<CpuEvent>();
}

void CpuBackend::record(Event& event, Queue) {
  static_cast<CpuEvent&>(event).at = std::chrono::steady_clock::now();
}

double CpuBackend::elapsed_seconds(const Event& start, const Event& end) {
  return std::chrono::duration<double>(static_cast<const CpuEvent&>(end).at -
                                       static_cast<const CpuEvent&>(start).at)
      .count();
}

void CpuBackend::set_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

void CpuBackend::copy_to_device(Tensor dst, const void* host_src) {
  std::memcpy(dst.data, host_src, dst.bytes());
}

void CpuBackend::copy_to_host(void* host_dst, Tensor src) {
  std::memcpy(host_dst, src.data, src.bytes());
}

void CpuBackend::copy(Tensor dst, Tensor src) {
  LLMFT_REQUIRE(dst.bytes() == src.bytes(), "internal: copy between tensors of different sizes");
  std::memcpy(dst.data, src.data, src.bytes());
}

void CpuBackend::fill(Tensor t, float value) {
  cpu::fill(t.data, t.dtype, value, t.numel());
}

void CpuBackend::convert(Tensor dst, Tensor src) {
  LLMFT_REQUIRE(dst.numel() == src.numel(), "internal: convert between tensors of different sizes");
  cpu::convert(dst.data, dst.dtype, src.data, src.dtype, src.numel());
}

void CpuBackend::linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias) {
  cpu::linear_forward(f32(out), f32(inp), f32(weight), f32(bias), rows(inp), inp.dim(-1),
                      weight.dim(0));
}

void CpuBackend::linear_backward(Tensor dinp, bool accumulate_dinp, Tensor dweight, Tensor dbias,
                                 Tensor dout, Tensor inp, Tensor weight) {
  cpu::linear_backward(f32(dinp), accumulate_dinp, f32(dweight), f32(dbias), f32(dout), f32(inp),
                       f32(weight), rows(inp), inp.dim(-1), weight.dim(0));
}

void CpuBackend::embedding_forward(Tensor out, Tensor tokens, Tensor positions, Tensor wte,
                                   Tensor wpe, int64_t vocab_start) {
  cpu::embedding_forward(f32(out), i32(tokens), i32(positions), f32(wte), f32(wpe), tokens.numel(),
                         wte.dim(1), vocab_start, wte.dim(0));
}

void CpuBackend::embedding_backward(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens,
                                    Tensor positions, int64_t vocab_start) {
  cpu::embedding_backward(f32(dwte), f32(dwpe), f32(dout), i32(tokens), i32(positions),
                          tokens.numel(), dwte.dim(1), vocab_start, dwte.dim(0));
}

void CpuBackend::layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight,
                                   Tensor bias, float eps) {
  cpu::layernorm_forward(f32(out), f32(mean), f32(rstd), f32(inp), f32(weight), f32(bias),
                         rows(inp), inp.dim(-1), eps);
}

void CpuBackend::layernorm_backward(Tensor dinp, Tensor dweight, Tensor dbias, Tensor dout,
                                    Tensor inp, Tensor weight, Tensor mean, Tensor rstd) {
  cpu::layernorm_backward(f32(dinp), f32(dweight), f32(dbias), f32(dout), f32(inp), f32(weight),
                          f32(mean), f32(rstd), rows(inp), inp.dim(-1));
}

void CpuBackend::rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, float eps) {
  cpu::rmsnorm_forward(f32(out), f32(rstd), f32(inp), f32(weight), rows(inp), inp.dim(-1), eps);
}

void CpuBackend::rmsnorm_backward(Tensor dinp, Tensor dweight, Tensor dout, Tensor inp,
                                  Tensor weight, Tensor rstd) {
  cpu::rmsnorm_backward(f32(dinp), f32(dweight), f32(dout), f32(inp), f32(weight), f32(rstd),
                        rows(inp), inp.dim(-1));
}

void CpuBackend::rope_forward(Tensor qkv, Tensor positions, int n_head, int n_kv_head,
                              const RopeFrequencies& freqs) {
  const int64_t D = rope_head_size(qkv.dim(-1), n_head, n_kv_head, freqs);
  cpu::rope_forward(f32(qkv), i32(positions), positions.numel(), n_head, n_kv_head, D,
                    freqs.inv_freq);
}

void CpuBackend::rope_backward(Tensor dqkv, Tensor positions, int n_head, int n_kv_head,
                               const RopeFrequencies& freqs) {
  const int64_t D = rope_head_size(dqkv.dim(-1), n_head, n_kv_head, freqs);
  cpu::rope_backward(f32(dqkv), i32(positions), positions.numel(), n_head, n_kv_head, D,
                     freqs.inv_freq);
}

void CpuBackend::attention_forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                                   int n_kv_head, int64_t first_query) {
  const int64_t B = qkv.dim(0), D = qkv.dim(-1) / (n_head + 2 * n_kv_head);
  const int64_t T = out.numel() / (B * n_head * D);
  cpu::attention_forward(f32(out), f32(lse), f32(qkv), i32(positions), B, T, n_head, n_kv_head, D,
                         qkv.dim(1), first_query);
}

void CpuBackend::attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                                    Tensor positions, int n_head, int n_kv_head, Tensor) {
  const int64_t D = out.dim(-1) / n_head;
  cpu::attention_backward(f32(dqkv), f32(dout), f32(qkv), f32(out), f32(lse), i32(positions),
                          qkv.dim(0), qkv.dim(1), n_head, n_kv_head, D);
}

void CpuBackend::gelu_forward(Tensor out, Tensor inp) {
  cpu::gelu_forward(f32(out), f32(inp), inp.numel());
}

void CpuBackend::gelu_backward(Tensor dinp, Tensor inp, Tensor dout) {
  cpu::gelu_backward(f32(dinp), f32(inp), f32(dout), inp.numel());
}

void CpuBackend::swiglu_forward(Tensor out, Tensor gate_up) {
  cpu::swiglu_forward(f32(out), f32(gate_up), rows(out), out.dim(-1));
}

void CpuBackend::swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) {
  cpu::swiglu_backward(f32(dgate_up), f32(gate_up), f32(dout), rows(dout), dout.dim(-1));
}

void CpuBackend::add_inplace(Tensor acc, Tensor x) {
  LLMFT_REQUIRE(acc.numel() == x.numel(), "internal: add_inplace of tensors of different sizes");
  cpu::accumulate(acc.data, acc.dtype, f32(x), acc.numel());
}

void CpuBackend::cross_entropy_max(Tensor stats, Tensor logits, int64_t valid) {
  cpu::cross_entropy_max(f32(stats), f32(logits), rows(logits), logits.dim(-1), valid);
}

void CpuBackend::cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets,
                                    int64_t vocab_start, int64_t valid) {
  cpu::cross_entropy_sums(f32(stats), f32(logits), i32(targets), rows(logits), logits.dim(-1),
                          valid, vocab_start);
}

void CpuBackend::cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets,
                                      int64_t vocab_start, int64_t, float grad_scale) {
  const double sum = cpu::cross_entropy_finish(f32(logits), f32(stats), i32(targets), rows(logits),
                                               logits.dim(-1), vocab_start, grad_scale);
  *f32(loss_sum) += static_cast<float>(sum);
}

void CpuBackend::sum_squares(Tensor sum_sq, Tensor x) {
  *f32(sum_sq) += static_cast<float>(cpu::sum_squares(x.data, x.dtype, x.numel()));
}

void CpuBackend::adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float lr, float beta1,
                              float beta2, float eps, float weight_decay, float grad_scale,
                              float bias_correction1, float bias_correction2) {
  cpu::adamw_update(f32(param), grad.data, grad.dtype, f32(m), f32(v), param.numel(), lr, beta1,
                    beta2, eps, weight_decay, grad_scale, bias_correction1, bias_correction2);
}

void CpuBackend::sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float lr,
                            float momentum, float weight_decay, float grad_scale) {
  cpu::sgd_update(param.data, param.dtype, grad.data, grad.dtype, f32(momentum_buf), param.numel(),
                  lr, momentum, weight_decay, grad_scale);
}

namespace {

// Columns of an AdaLomo slice: 0 for a vector.
int64_t adalomo_cols(const Tensor& t) {
  return t.shape.size() == 2 ? t.dim(1) : 0;
}

}  // namespace

void CpuBackend::adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad,
                                     float grad_scale) {
  cpu::adalomo_square_sums(f32(row_sums), f32(col_sums), grad.data, grad.dtype, grad.dim(0),
                           adalomo_cols(grad), grad_scale);
}

void CpuBackend::adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                                 Tensor col_sums, int64_t full_rows, int64_t full_cols,
                                 float beta2) {
  cpu::adalomo_moments(f32(row_state), f32(col_state), f32(stats), f32(row_sums), f32(col_sums),
                       row_state.numel(), col_state.defined() ? col_state.numel() : 0, full_rows,
                       full_cols, beta2);
}

void CpuBackend::adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state,
                               Tensor col_state, int64_t full_rows, float grad_scale) {
  cpu::adalomo_norms(f32(stats), param.data, param.dtype, grad.data, grad.dtype, f32(row_state),
                     f32(col_state), param.dim(0), adalomo_cols(param), full_rows, grad_scale);
}

void CpuBackend::adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                               Tensor stats, int64_t full_rows, int64_t full_numel, float lr,
                               float weight_decay, float grad_scale) {
  cpu::adalomo_apply(param.data, param.dtype, grad.data, grad.dtype, f32(row_state), f32(col_state),
                     f32(stats), param.dim(0), adalomo_cols(param), full_rows, full_numel, lr,
                     weight_decay, grad_scale);
}

}  // namespace llmft
