// CudaBackend: the Backend on one NVIDIA GPU. Kernels run on a compute stream and
// collectives on a communication stream, ordered by CUDA events; hooks return once their
// work is queued (core/backend.h). It computes in the stored dtype (ComputeRule::stored:
// bf16/fp16 weights feed cuBLASLt directly, activations and gradients stay 16-bit, every
// product accumulates in f32; statistics are f32). Matrix products go to cuBLASLt
// (core/cuda/gemm.h); everything else to our kernels (core/cuda/cuda_kernels.h).
//
// Memory: at construction the backend takes its device, creates its streams, the cuBLASLt
// handle and workspace, cuDNN's for attention (core/cuda/cudnn_attention_route.h) and a
// scratch for reductions, launches every kernel once (module loading is lazy), and
// measures what all that left free (cudaMemGetInfo): the difference from the device's
// total is the fixed overhead, reported on its own. The slab for the tracking allocator
// (core/cuda/cuda_memory.h) is reserved later, at the first memory() or
// memory_capacity(), so that the communicators a run creates first (NCCL's buffers,
// warmed by Communicator::warm_up) keep their memory outside it: the growth of device use
// between the two measurements is the communicator overhead. The slab is `memory_bytes`,
// or the free memory less kRuntimeReserve for what the runtime still allocates lazily.
// Ranks sharing the GPU take an even share of what was free at construction (they use the
// staged MPI communicator, which holds no device memory).
//
// Thread-safety: one Backend per rank, used from one thread.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>

#include "core/backend.h"
#include "core/cuda/cuda_memory.h"
#include "core/cuda/cudnn_attention_route.h"
#include "core/cuda/gemm.h"

namespace llmft {

class CudaBackend : public Backend {
 public:
  static constexpr size_t kRuntimeReserve = size_t{256} << 20;

  // memory_bytes: the slab (0: what is free). ranks_sharing: the ranks of this node on the
  // same GPU, which split its memory evenly; node_barrier (when set): waits for every rank
  // of the node, which each calls twice here, so that they all measure their fixed
  // overhead before any reserves its share.
  CudaBackend(int device, size_t memory_bytes, int ranks_sharing = 1,
              const std::function<void()>& node_barrier = {});
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string device_model() const override { return properties_.name; }
  std::string describe() const override;
  ComputeRule compute_rule() const override { return ComputeRule::stored; }
  DeviceMemory& memory() override { return slab(); }
  size_t memory_capacity() override { return slab().reserved(); }
  void release_memory() override;
  size_t fixed_overhead() const override { return fixed_overhead_; }
  size_t communicator_overhead() const override { return communicator_overhead_; }
  size_t memory_outside_allocator() override;
  int ranks_sharing_device() const override { return ranks_sharing_; }
  bool host_memory() const override { return false; }
  DeviceMemory& host_pool_memory() override { return pinned_; }
  void synchronize() override;
  // The stream behind Queue::compute (NCCL's communicators order their own streams
  // after it).
  cudaStream_t compute_stream() const { return compute_; }
  int device() const { return device_; }

  std::unique_ptr<Event> create_event() override;
  void record(Event& event, Queue queue) override;
  void wait(Queue queue, const Event& event) override;
  void synchronize(const Event& event) override;
  double elapsed_seconds(const Event& start, const Event& end) override;

  void copy_to_device(Tensor dst, const void* host_src) override;
  void copy_to_host(void* host_dst, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float value) override;
  void convert(Tensor dst, Tensor src) override;

  void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias) override;
  // One cuBLASLt product with its bias + GELU epilogue where the operands allow.
  void linear_gelu_forward(Tensor out, Tensor pre_activation, Tensor inp, Tensor weight,
                           Tensor bias) override;
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
  void residual_layernorm_forward(Tensor residual, Tensor x, Tensor out, Tensor mean, Tensor rstd,
                                  Tensor weight, Tensor bias, float eps) override;
  void residual_rmsnorm_forward(Tensor residual, Tensor x, Tensor out, Tensor rstd, Tensor weight,
                                float eps) override;
  void rope_forward(Tensor qkv, Tensor positions, int n_head, int n_kv_head,
                    const RopeFrequencies& freqs) override;
  void rope_backward(Tensor dqkv, Tensor positions, int n_head, int n_kv_head,
                     const RopeFrequencies& freqs) override;
  void attention_forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                         int n_kv_head, int64_t first_query) override;
  void attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                          Tensor positions, int n_head, int n_kv_head, Tensor workspace) override;
  AttentionWorkspaceRule attention_workspace_rule() const override;
  size_t attention_backward_workspace(Tensor qkv, Tensor positions, int n_head,
                                      int n_kv_head) override;
  void gelu_forward(Tensor out, Tensor inp) override;
  void gelu_backward(Tensor dinp, Tensor inp, Tensor dout) override;
  void swiglu_forward(Tensor out, Tensor gate_up) override;
  void swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) override;
  void add_inplace(Tensor acc, Tensor x) override;
  void cross_entropy_max(Tensor stats, Tensor logits, int64_t valid) override;
  void cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets, int64_t vocab_start,
                          int64_t valid) override;
  void cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets,
                            int64_t vocab_start, int64_t valid, float grad_scale) override;
  void sum_squares(Tensor sum_sq, Tensor x) override;
  void adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float lr, float beta1,
                    float beta2, float eps, float weight_decay, float grad_scale,
                    float bias_correction1, float bias_correction2) override;
  void sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float lr, float momentum,
                  float weight_decay, float grad_scale) override;
  void adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad,
                           float grad_scale) override;
  void adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                       Tensor col_sums, int64_t full_rows, int64_t full_cols, float beta2) override;
  void adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                     int64_t full_rows, float grad_scale) override;
  void adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state, Tensor stats,
                     int64_t full_rows, int64_t full_numel, float lr, float weight_decay,
                     float grad_scale) override;

 private:
  // Runs every hook once on tiny tensors in each float dtype (loads every kernel).
  void launch_every_kernel();
  // The slab, reserved first if it is not (measuring the communicator overhead).
  CudaMemory& slab();

  int device_;
  cudaDeviceProp properties_{};
  cudaStream_t compute_ = nullptr, communication_ = nullptr;
  std::unique_ptr<cuda::Gemm> gemm_;
  std::unique_ptr<cuda::CudnnAttentionRoute> cudnn_attention_;  // bf16/fp16 attention
  double* partials_ = nullptr;  // scratch of the reductions' fixed partial sums
  size_t fixed_overhead_ = 0;
  size_t requested_bytes_ = 0;  // --device-memory; 0: what is free
  int ranks_sharing_ = 1;
  size_t shared_available_ = 0;  // a sharing rank's share of the free memory at construction
  size_t communicator_overhead_ = 0;
  std::unique_ptr<CudaMemory> memory_;
  PinnedHostMemory pinned_;
};

}  // namespace llmft
