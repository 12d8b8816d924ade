// CountingBackend: a device that only counts. Its kernels do nothing and its memory has
// addresses but no bytes, so the real Model and Engine can run a step on it to learn
// what that step allocates, when, and under which category, without computing anything
// or owning the memory (the memory model, parallel/memory_model.h, is such a dry run).
// It stands for a backend by taking that backend's compute rule (core/compute_dtype.h),
// which is what the code that allocates asks of a backend.
//
// It also tallies what each kernel would have done (core/counting/work_tally.h), which the
// time model prices.
//
// Buffers of at most kRealBytes are real host memory, and the copy hooks move their bytes:
// the step's scalars (token counts, loss sums, norms) then read back as written. Larger
// buffers read back as zeros.
//
// Thread-safety: one per dry run, used from one thread.
#pragma once

#include <cstdint>
#include <map>

#include "core/backend.h"
#include "core/counting/work_tally.h"

namespace llmft {

class CountingMemory : public DeviceMemory {
 public:
  static constexpr size_t kRealBytes = 4096;

  CountingMemory() = default;
  CountingMemory(const CountingMemory&) = delete;
  CountingMemory& operator=(const CountingMemory&) = delete;
  ~CountingMemory() override;
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  // Whether `ptr` points into a real (small) buffer.
  bool is_real(const void* ptr) const;

 private:
  // Above 2^48, where no x86-64 or AArch64 process maps memory: never a real address.
  uintptr_t next_address_ = uintptr_t{1} << 52;
  std::map<uintptr_t, size_t> real_;  // real buffers: start address -> bytes
};

class CountingBackend : public Backend {
 public:
  // Stands for a backend computing by `rule` whose attention backward asks workspace by
  // `attention`.
  explicit CountingBackend(ComputeRule rule = ComputeRule::f32,
                           AttentionWorkspaceRule attention = AttentionWorkspaceRule::none)
      : rule_(rule), attention_rule_(attention) {}
  std::string name() const override { return "counting"; }
  std::string describe() const override;
  ComputeRule compute_rule() const override { return rule_; }
  DeviceMemory& memory() override { return memory_; }
  void synchronize() override {}
  // Nothing runs, so every event is reached at once and no time passes.
  std::unique_ptr<Event> create_event() override { return std::make_unique<Event>(); }
  void record(Event&, Queue) override {}
  void wait(Queue, const Event&) override {}
  void synchronize(const Event&) override {}
  double elapsed_seconds(const Event&, const Event&) override { return 0.0; }

  void copy_to_device(Tensor dst, const void* host_src) override;
  void copy_to_host(void* host_dst, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float) override { kernel(KernelKind::copy, t); }
  void convert(Tensor dst, Tensor src) override { kernel(KernelKind::copy, dst, src); }

  void linear_forward(Tensor out, Tensor, Tensor weight, Tensor bias) override;
  // The product, and the GELU's output written beside it (a GPU's epilogue: the CPU's
  // separate pass also reads the pre-activation).
  void linear_gelu_forward(Tensor out, Tensor pre_activation, Tensor inp, Tensor weight,
                           Tensor bias) override {
    linear_forward(pre_activation, inp, weight, bias);
    kernel(KernelKind::activation, out);
  }
  void linear_backward(Tensor dinp, bool, Tensor dweight, Tensor dbias, Tensor dout, Tensor,
                       Tensor weight) override;
  // Only the table rows of the tokens are touched: as many bytes as out (dout).
  void embedding_forward(Tensor out, Tensor tokens, Tensor positions, Tensor /*wte*/, Tensor wpe,
                         int64_t) override {
    kernel(KernelKind::embedding, out, tokens, positions, wpe);
  }
  void embedding_backward(Tensor /*dwte*/, Tensor dwpe, Tensor dout, Tensor tokens,
                          Tensor positions, int64_t) override {
    kernel(KernelKind::embedding, dout, tokens, positions, dwpe);
  }
  void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight,
                         Tensor bias, float) override {
    kernel(KernelKind::norm, out, mean, rstd, inp, weight, bias);
  }
  void layernorm_backward(Tensor dinp, Tensor dweight, Tensor dbias, Tensor dout, Tensor inp,
                          Tensor weight, Tensor mean, Tensor rstd) override {
    kernel(KernelKind::norm, dinp, dweight, dbias, dout, inp, weight, mean, rstd);
  }
  void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, float) override {
    kernel(KernelKind::norm, out, rstd, inp, weight);
  }
  void rmsnorm_backward(Tensor dinp, Tensor dweight, Tensor dout, Tensor inp, Tensor weight,
                        Tensor rstd) override {
    kernel(KernelKind::norm, dinp, dweight, dout, inp, weight, rstd);
  }
  // One pass: the residual read and written, x read, the norm's outputs written.
  void residual_layernorm_forward(Tensor residual, Tensor x, Tensor out, Tensor mean, Tensor rstd,
                                  Tensor weight, Tensor bias, float) override {
    kernel(KernelKind::norm, residual, residual, x, out, mean, rstd, weight, bias);
  }
  void residual_rmsnorm_forward(Tensor residual, Tensor x, Tensor out, Tensor rstd, Tensor weight,
                                float) override {
    kernel(KernelKind::norm, residual, residual, x, out, rstd, weight);
  }
  void rope_forward(Tensor qkv, Tensor positions, int, int, const RopeFrequencies&) override {
    kernel(KernelKind::rope, qkv, positions);
  }
  void rope_backward(Tensor dqkv, Tensor positions, int, int, const RopeFrequencies&) override {
    kernel(KernelKind::rope, dqkv, positions);
  }
  void attention_forward(Tensor out, Tensor, Tensor qkv, Tensor, int n_head, int n_kv_head,
                         int64_t) override;
  void attention_backward(Tensor, Tensor, Tensor qkv, Tensor, Tensor, Tensor, int n_head,
                          int n_kv_head, Tensor) override;
  AttentionWorkspaceRule attention_workspace_rule() const override { return attention_rule_; }
  // The rule's bound for every call it takes: the dry run's micro-batches are continuous
  // streams, one sample per row (a packed run's prediction is so an upper bound).
  size_t attention_backward_workspace(Tensor qkv, Tensor, int n_head, int n_kv_head) override;
  void gelu_forward(Tensor out, Tensor inp) override { kernel(KernelKind::activation, out, inp); }
  void gelu_backward(Tensor dinp, Tensor inp, Tensor dout) override {
    kernel(KernelKind::activation, dinp, inp, dout);
  }
  void swiglu_forward(Tensor out, Tensor gate_up) override {
    kernel(KernelKind::activation, out, gate_up);
  }
  void swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) override {
    kernel(KernelKind::activation, dgate_up, gate_up, dout);
  }
  void add_inplace(Tensor acc, Tensor x) override { kernel(KernelKind::add, acc, x); }
  void cross_entropy_max(Tensor stats, Tensor logits, int64_t) override {
    kernel(KernelKind::cross_entropy, stats, logits);
  }
  void cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets, int64_t, int64_t) override {
    kernel(KernelKind::cross_entropy, stats, logits, targets);
  }
  void cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets, int64_t,
                            int64_t, float) override {
    kernel(KernelKind::cross_entropy, logits, loss_sum, stats, targets);
  }
  void sum_squares(Tensor sum_sq, Tensor x) override { kernel(KernelKind::reduction, sum_sq, x); }
  void adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float, float, float, float,
                    float, float, float, float) override {
    kernel(KernelKind::optimizer, param, grad, m, v);
  }
  void sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float, float, float,
                  float) override {
    kernel(KernelKind::optimizer, param, grad, momentum_buf);
  }
  void adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad, float) override {
    kernel(KernelKind::optimizer, row_sums, col_sums, grad);
  }
  void adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                       Tensor col_sums, int64_t, int64_t, float) override {
    kernel(KernelKind::optimizer, row_state, col_state, stats, row_sums, col_sums);
  }
  void adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                     int64_t, float) override {
    kernel(KernelKind::optimizer, stats, param, grad, row_state, col_state);
  }
  void adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state, Tensor stats,
                     int64_t, int64_t, float, float, float) override {
    kernel(KernelKind::optimizer, param, grad, row_state, col_state, stats);
  }

  // What the kernels called so far would have done.
  const WorkTally& tally() const { return tally_; }

 private:
  // A kernel of `kind` over these tensors (absent ones hold no bytes).
  template <typename... Tensors>
  void kernel(KernelKind kind, const Tensors&... tensors) {
    tally_.add_kernel(kind,
                      (0.0 + ... + static_cast<double>(tensors.defined() ? tensors.bytes() : 0)));
  }

  ComputeRule rule_;
  AttentionWorkspaceRule attention_rule_;
  CountingMemory memory_;
  WorkTally tally_;
};

}  // namespace llmft
