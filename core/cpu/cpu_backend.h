// CpuBackend: the reference Backend. Device memory is host memory (64-byte aligned),
// kernels run synchronously on the calling thread plus an OpenMP team, and matrix
// products go to OpenBLAS. Every reduction inside a kernel adds in a fixed order, so
// results do not depend on the number of threads (core/cpu/ordered_reduce.h). Every test
// runs on it; the CUDA backend must agree with it.
#pragma once

#include <unordered_map>
#include <vector>

#include "core/backend.h"

namespace llmft {

// Host memory for the CPU backend. Like the CUDA caching allocator, it keeps released
// blocks and hands them out again for requests of the same size, so the buffers a
// training step takes and frees are not returned to the OS (and page-faulted back in)
// every step. The tracking Allocator counts bytes in use, not bytes cached.
class CpuMemory : public DeviceMemory {
 public:
  CpuMemory() = default;
  CpuMemory(const CpuMemory&) = delete;
  CpuMemory& operator=(const CpuMemory&) = delete;
  ~CpuMemory() override;
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;

 private:
  std::unordered_map<size_t, std::vector<void*>> cached_;
};

class CpuBackend : public Backend {
 public:
  // Makes sure OpenBLAS runs a kernel that suits this CPU (core/cpu/blas_kernel.h).
  CpuBackend();
  std::string name() const override { return "cpu"; }
  std::string describe() const override;
  ComputeRule compute_rule() const override { return ComputeRule::f32; }
  DeviceMemory& memory() override { return memory_; }
  void set_threads(int threads) override;
  void synchronize() override {}
  std::unique_ptr<Event> create_event() override;
  void record(Event& event, Queue queue) override;
  void wait(Queue, const Event&) override {}  // work runs in call order already
  void synchronize(const Event&) override {}
  double elapsed_seconds(const Event& start, const Event& end) override;

  void copy_to_device(Tensor dst, const void* host_src) override;
  void copy_to_host(void* host_dst, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float value) override;
  void convert(Tensor dst, Tensor src) override;

  void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias) override;
  void linear_backward(Tensor dinp, bool accumulate_dinp, Tensor dweight, Tensor dbias, Tensor dout,
                       Tensor inp, Tensor weight) override;
  void embedding_forward(Tensor out, Tensor tokens, Tensor positions, Tensor wte, Tensor wpe,
                         int64_t vocab_start) override;
  void embedding_backward(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens, Tensor positions,
                          int64_t vocab_start) override;
  void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight,
                         Tensor bias, float eps) override;
  void layernorm_backward(Tensor dinp, Tensor dweight, Tensor dbias, Tensor dout, Tensor inp,
                          Tensor weight, Tensor mean, Tensor rstd) override;
  void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, float eps) override;
  void rmsnorm_backward(Tensor dinp, Tensor dweight, Tensor dout, Tensor inp, Tensor weight,
                        Tensor rstd) override;
  void rope_forward(Tensor qkv, Tensor positions, int n_head, int n_kv_head,
                    const RopeFrequencies& freqs) override;
  void rope_backward(Tensor dqkv, Tensor positions, int n_head, int n_kv_head,
                     const RopeFrequencies& freqs) override;
  void attention_forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                         int n_kv_head, int64_t first_query) override;
  // Needs no workspace.
  void attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                          Tensor positions, int n_head, int n_kv_head, Tensor) override;
  void gelu_forward(Tensor out, Tensor inp) override;
  void gelu_backward(Tensor dinp, Tensor inp, Tensor dout) override;
  void swiglu_forward(Tensor out, Tensor gate_up) override;
  void swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) override;
  void add_inplace(Tensor acc, Tensor x) override;
  void cross_entropy_max(Tensor stats, Tensor logits, int64_t valid) override;
  void cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets, int64_t vocab_start,
                          int64_t valid) override;
  // The CPU's pass 2 wrote the exps over the logits, padding already zero: `valid` unused.
  void cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets,
                            int64_t vocab_start, int64_t valid, float grad_scale) override;
  void sum_squares(Tensor sum_sq, Tensor x) override;
  void adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float lr, float beta1,
                    float beta2, float eps, float weight_decay, float grad_scale,
                    float bias_correction1, float bias_correction2) override;
  void adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad,
                           float grad_scale) override;
  void adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                       Tensor col_sums, int64_t full_rows, int64_t full_cols, float beta2) override;
  void adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                     int64_t full_rows, float grad_scale) override;
  void adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state, Tensor stats,
                     int64_t full_rows, int64_t full_numel, float lr, float weight_decay,
                     float grad_scale) override;
  void sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float lr, float momentum,
                  float weight_decay, float grad_scale) override;

 private:
  CpuMemory memory_;
};

}  // namespace llmft
