// Backend: the kernels and memory of one device kind (cpu, cuda), one per rank.
//
// Model, parallel and optim code call these hooks with Tensor views and never touch
// the bytes themselves. Kernels may run asynchronously on the backend's compute queue (a
// CUDA stream): a call returns once the work is queued, work runs in call order, and only
// copy_to_host and the synchronize calls wait for it. Collectives run on the backend's
// communication queue; events order the two queues and time them. Every hook is
// required unless it says "optional".
//
// Releasing memory under queued work (docs/ARCHITECTURE.md): a buffer may be released as
// soon as the host has queued the last compute work that uses it, because whatever is
// allocated in its place is used by compute work queued later; a buffer that a
// collective reads or writes may be released only after the collective's request was
// waited for (which orders the compute queue after it).
//
// Conventions: (N, C) shapes are row-major; a linear layer's weight is (OC, C), as in
// torch.nn.Linear. Kernels take tensors in the run's compute dtype (compute_rule()) and
// accumulate in f32; statistics (rstd, mean, lse, the loss's) are f32. Weight and bias
// gradients (linear_backward's dweight and dbias, the norms' backwards', embedding_backward's
// dwte and dwpe) may also be f32 whatever the compute dtype: a run that sums gradients in
// fp32 has backward add straight into its f32 sums. A backend rejects dtypes its rule never
// produces with an Error.
//
// Thread-safety: one Backend per rank, used from one thread.
#pragma once

#include <memory>
#include <string>

#include "core/allocator.h"
#include "core/attention_workspace.h"
#include "core/compute_dtype.h"
#include "core/rope_frequencies.h"
#include "core/tensor.h"

namespace llmft {

// The two queues of a backend: kernels, and collectives.
enum class Queue { compute, communication };

// A point in a backend's work: everything queued on one queue before it was recorded.
class Event {
 public:
  virtual ~Event() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // What runs the kernels, in a line for the log (device, threads, math libraries).
  virtual std::string describe() const = 0;
  // The accelerator's model as its driver names it ("NVIDIA H200"); empty on the CPU.
  virtual std::string device_model() const { return ""; }
  // Which dtype the kernels compute a run in (core/compute_dtype.h).
  virtual ComputeRule compute_rule() const = 0;
  // A GPU reserves its slab at the first call of memory() or memory_capacity(), so that
  // communicators created before then (NCCL's buffers) find room beside it.
  virtual DeviceMemory& memory() = 0;
  // Bytes the backend's memory can hand out (a GPU's slab); 0: no fixed limit (the CPU's
  // host memory). Optional.
  virtual size_t memory_capacity() { return 0; }
  // Gives back what memory() reserved, so that communicators created from now on find room
  // too; the next memory() reserves anew with what is free then. Optional: nothing.
  // REQUIRES: nothing allocated from memory() is still held.
  virtual void release_memory() {}
  // Device memory held outside the allocator (context, library handles and workspaces,
  // loaded kernels), measured when the backend starts. Optional: 0.
  virtual size_t fixed_overhead() const { return 0; }
  // Device memory that communicators created before memory() reserved (NCCL's state and
  // buffers) hold outside the allocator, measured then. Optional: 0.
  virtual size_t communicator_overhead() const { return 0; }
  // Device memory in use outside the allocator now (on a GPU measured by cudaMemGetInfo: the
  // fixed overhead, communicators' buffers and whatever the runtime allocated since), this
  // rank's share where ranks share the device. Optional: the two figures above.
  virtual size_t memory_outside_allocator() { return fixed_overhead() + communicator_overhead(); }
  // How many ranks (this one included) run on this rank's device: more than 1 only where
  // ranks were allowed to share a GPU and do. Optional: 1.
  virtual int ranks_sharing_device() const { return 1; }
  // Whether tensors live in host memory that any host code (MPI) may read and write.
  virtual bool host_memory() const { return true; }
  // Host memory this device copies to and from fastest (pinned on CUDA), for what a run
  // keeps off the device (optimizer offload, parallel/optimizer_offload.h). Its tensors may
  // be the source or destination of copy, copy_to_host and copy_to_device, and the host
  // backend's kernels run on them. Optional: a backend whose tensors are host memory
  // returns its own memory.
  virtual DeviceMemory& host_pool_memory() { return memory(); }
  // Sets the number of host threads kernels may use. Optional: default ignores it.
  virtual void set_threads(int threads) { (void)threads; }
  // Waits for all queued work.
  virtual void synchronize() = 0;

  // --- events ---
  virtual std::unique_ptr<Event> create_event() = 0;
  // Marks `event` at the end of the work queued on `queue` so far.
  virtual void record(Event& event, Queue queue) = 0;
  // Work queued on `queue` from now on starts only once `event` is reached.
  virtual void wait(Queue queue, const Event& event) = 0;
  // Blocks the host until `event` is reached.
  virtual void synchronize(const Event& event) = 0;
  // Seconds from `start` to `end`, both reached (synchronize on `end` first).
  virtual double elapsed_seconds(const Event& start, const Event& end) = 0;

  // --- data movement ---
  virtual void copy_to_device(Tensor dst, const void* host_src) = 0;
  // Waits for queued work that writes `src`, then copies.
  virtual void copy_to_host(void* host_dst, Tensor src) = 0;
  // Queued like a kernel; either side may be a tensor of host_pool_memory() (the host then
  // reads a copied-out tensor only after synchronizing on an event recorded after it).
  virtual void copy(Tensor dst, Tensor src) = 0;
  // t = value, for any float dtype.
  virtual void fill(Tensor t, float value) = 0;
  // dst = src in dst's dtype (f32, bf16, fp16; round to nearest even); same numel.
  virtual void convert(Tensor dst, Tensor src) = 0;

  // --- dense layers ---
  // out(N, OC) = inp(N, C) @ weight(OC, C)^T (+ bias(OC) if defined)
  virtual void linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias) = 0;
  // dinp(N, C) = dout(N, OC) @ weight  (+= when accumulate_dinp)
  // dweight(OC, C) += dout^T @ inp;  dbias(OC) += sum over N of dout (if defined)
  virtual void linear_backward(Tensor dinp, bool accumulate_dinp, Tensor dweight, Tensor dbias,
                               Tensor dout, Tensor inp, Tensor weight) = 0;

  // A linear layer followed by GELU (GPT-2's MLP): pre_activation(N, OC) = the linear
  // layer's output, kept for backward; out = gelu(pre_activation). A backend may compute
  // the GELU from the product's f32 sum before it is rounded (cuBLASLt's bias + GELU
  // epilogue): within one rounding of the two hooks. Optional: the two hooks.
  virtual void linear_gelu_forward(Tensor out, Tensor pre_activation, Tensor inp, Tensor weight,
                                   Tensor bias) {
    linear_forward(pre_activation, inp, weight, bias);
    gelu_forward(out, pre_activation);
  }

  // --- embeddings ---
  // Every token has a position, positions(B, T) i32: t plus the tokens before the
  // micro-batch for a continuous stream, the index within its sample for samples packed
  // into a window (io/window_layout.h). Along a row a position is 0 (a sample starts) or
  // the previous one plus 1, so sample starts never fall as t rises (the kernels skip key
  // tiles by it). Attention does not cross a sample's start.
  // out(B, T, C) = wte[tokens[b, t] - vocab_start] + wpe[positions[b, t]] (wpe
  // optional: undefined). wte(rows, C) is a vocabulary-parallel slice (the whole table
  // when vocab_start is 0 and rows the vocabulary): tokens outside it contribute zero.
  virtual void embedding_forward(Tensor out, Tensor tokens, Tensor positions, Tensor wte,
                                 Tensor wpe, int64_t vocab_start) = 0;
  // dwte[tokens[b, t] - vocab_start] += dout[b, t] (tokens in the slice);
  // dwpe[positions[b, t]] += dout[b, t] (if defined)
  virtual void embedding_backward(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens,
                                  Tensor positions, int64_t vocab_start) = 0;

  // --- normalisation ---
  // out(N, C) = (inp - mean) * rstd * weight + bias;  mean(N), rstd(N) kept for backward
  virtual void layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight,
                                 Tensor bias, float eps) = 0;
  // dinp(N, C) += d/dinp;  dweight(C) += ...;  dbias(C) += ...
  virtual void layernorm_backward(Tensor dinp, Tensor dweight, Tensor dbias, Tensor dout,
                                  Tensor inp, Tensor weight, Tensor mean, Tensor rstd) = 0;
  // RMSNorm: out(N, C) = inp * rstd * weight, rstd(N) = 1 / sqrt(mean(inp^2) + eps)
  virtual void rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, float eps) = 0;
  // dinp(N, C) += d/dinp;  dweight(C) += ...
  virtual void rmsnorm_backward(Tensor dinp, Tensor dweight, Tensor dout, Tensor inp, Tensor weight,
                                Tensor rstd) = 0;

  // The residual stream's add fused with the norm that reads it: residual(N, C) += x
  // (rounded once into residual's dtype, as add_inplace), then the norm forward above of the
  // new residual into out (and its statistics). A backend that fuses them reads and writes
  // each element once, with the same bits as the two hooks. Optional: the two hooks.
  virtual void residual_layernorm_forward(Tensor residual, Tensor x, Tensor out, Tensor mean,
                                          Tensor rstd, Tensor weight, Tensor bias, float eps) {
    add_inplace(residual, x);
    layernorm_forward(out, mean, rstd, residual, weight, bias, eps);
  }
  virtual void residual_rmsnorm_forward(Tensor residual, Tensor x, Tensor out, Tensor rstd,
                                        Tensor weight, float eps) {
    add_inplace(residual, x);
    rmsnorm_forward(out, rstd, residual, weight, eps);
  }

  // --- rotary position embedding (Hugging Face's rotate-half layout) ---
  // Rotates, in place, the q and k heads of qkv(B, T, (H + 2*KVH) * D) (packed as for
  // attention): pair i of a head at position p = positions[b, t] turns by
  // p * freqs.inv_freq[i] (freqs.pairs == D / 2).
  virtual void rope_forward(Tensor qkv, Tensor positions, int n_head, int n_kv_head,
                            const RopeFrequencies& freqs) = 0;
  // The inverse rotation, applied in place to d(loss)/d(rotated qkv).
  virtual void rope_backward(Tensor dqkv, Tensor positions, int n_head, int n_kv_head,
                             const RopeFrequencies& freqs) = 0;

  // --- attention ---
  // Causal self-attention over a packed projection qkv(B, R, (H + 2*KVH) * D) holding
  // q heads, then k heads, then v heads; query head h reads kv head h / (H / KVH).
  // The queries are rows first_query .. first_query + T - 1; query t attends to the rows
  // from its sample's start, first_query + t - positions[b, t], up to its own: training
  // passes R = T and first_query 0; decoding passes a KV cache whose first rows hold
  // earlier tokens (and positions that start no sample). out(B, T, H * D); lse(B, H, T) = per-row
  // log-sum-exp of the scaled scores, the only thing kept besides qkv and out: backward
  // recomputes the probabilities.
  virtual void attention_forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions, int n_head,
                                 int n_kv_head, int64_t first_query) = 0;
  // Training layout only (R = T, first_query 0).
  // dqkv(B, T, (H + 2*KVH) * D) = gradient (overwritten). workspace: at least
  // attention_backward_workspace() bytes for these arguments (undefined when that is 0).
  virtual void attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                                  Tensor positions, int n_head, int n_kv_head,
                                  Tensor workspace) = 0;
  // Which backward runs 16-bit rows of one sample each, and so what workspace it asks
  // (core/attention_workspace.h). Optional: none.
  virtual AttentionWorkspaceRule attention_workspace_rule() const {
    return AttentionWorkspaceRule::none;
  }
  // The workspace bytes attention_backward needs for this call, which the caller allocates
  // (so the memory model counts it): the rule's bound where the backend's backward takes
  // the call, else 0. Optional: 0.
  virtual size_t attention_backward_workspace(Tensor qkv, Tensor positions, int n_head,
                                              int n_kv_head) {
    (void)qkv, (void)positions, (void)n_head, (void)n_kv_head;
    return 0;
  }

  // --- elementwise ---
  // GELU, tanh approximation (GPT-2's "gelu_new").
  virtual void gelu_forward(Tensor out, Tensor inp) = 0;
  // dinp = gelu'(inp) * dout; dinp may alias dout.
  virtual void gelu_backward(Tensor dinp, Tensor inp, Tensor dout) = 0;
  // SwiGLU: out(N, I) = silu(gate) * up with gate_up(N, 2I) = [gate | up] per row.
  virtual void swiglu_forward(Tensor out, Tensor gate_up) = 0;
  // dgate_up(N, 2I) = gradient (overwritten).
  virtual void swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) = 0;
  // acc += x; x is f32 or acc's dtype, acc f32, bf16 or fp16 (rounded once).
  virtual void add_inplace(Tensor acc, Tensor x) = 0;

  // --- loss: vocabulary-parallel cross-entropy fused with its gradient ---
  // Three passes around two reductions over the ranks that hold the vocabulary's slices
  // (one rank may hold it all). This rank's logits(N, Vl) are vocabulary entries
  // vocab_start .. vocab_start + Vl - 1, the first `valid` real and the rest padding.
  // stats(3, N) holds per row: the maximum, the sum of exp(logit - max), the target's logit.
  // 1. stats[0] = this rank's row maxima; then take the maximum over the ranks.
  virtual void cross_entropy_max(Tensor stats, Tensor logits, int64_t valid) = 0;
  // 2. stats[1] = this rank's sums of exp(logit - max), stats[2] = the target's logit
  //    where this rank holds it, else 0 (a backend may also write the exps over the
  //    logits); then sum stats[1..2] over the ranks.
  virtual void cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets, int64_t vocab_start,
                                  int64_t valid) = 0;
  // 3. loss_sum(1) += sum over rows with targets >= 0 of -log softmax[target];
  //    logits become (softmax - onehot(target)) * grad_scale; rows with a negative target
  //    and padding become zero. stats may be overwritten.
  virtual void cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets,
                                    int64_t vocab_start, int64_t valid, float grad_scale) = 0;

  // --- optimizer arithmetic ---
  // sum_sq(1) += sum of x^2 (x of any float dtype; accumulated in f64 where the device
  // allows). Infinite or NaN when x holds inf or NaN.
  virtual void sum_squares(Tensor sum_sq, Tensor x) = 0;
  // AdamW (decoupled weight decay) on one f32 tensor (the weights, or their f32 master
  // copy); grad (any float dtype) is multiplied by grad_scale first.
  // bias_correction1/2 = 1 - beta^step.
  virtual void adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float lr, float beta1,
                            float beta2, float eps, float weight_decay, float grad_scale,
                            float bias_correction1, float bias_correction2) = 0;
  // SGD with optional momentum buffer (f32; undefined when momentum == 0) and decoupled
  // weight decay: p -= lr * (wd * p);  g' = grad_scale * grad;  buf = momentum * buf + g';
  // p -= lr * buf (or lr * g' without a buffer). param may be of any float dtype: it is
  // read into f32 registers, updated and rounded back in one pass (LOMO's fused update,
  // with no f32 copy of the tensor).
  virtual void sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float lr, float momentum,
                          float weight_decay, float grad_scale) = 0;
  // AdaLomo (Lv et al. 2023b) on one tensor, param of any float dtype updated in place:
  //   g' = grad_scale * grad;  s = g'^2 + 1e-30
  //   matrix (R, C): row(R) = b2 row + (1-b2) mean_c s;  col(C) = b2 col + (1-b2) mean_r s
  //                  u = g' / sqrt(row / mean(row)) / sqrt(col)
  //   vector:        row(R) = b2 row + (1-b2) s;  u = g' / sqrt(row)
  //   u /= max(1, rms(u));  lr' = lr * max(1e-3, rms(param))
  //   param = param * (1 - lr' * weight_decay) - lr' * u
  // b2 is the step's decay, 1 - step^-0.8. It runs in four passes so that ranks holding
  // slices of the tensor (tensor parallelism) can sum statistics between them: param and
  // grad are this rank's slice, (R, C) of a whole (full_rows, full_cols), or a vector of R
  // (col_state and col_sums undefined); stats(3) = sum of row, sum of u^2, sum of param^2.
  // 1. row_sums(R) = sum of s over the slice's columns (a vector: s), col_sums(C) = sum of s
  //    over its rows; then ranks splitting rows sum col_sums, ranks splitting columns
  //    sum row_sums.
  virtual void adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad,
                                   float grad_scale) = 0;
  // 2. row and col from the whole tensor's sums; stats[0] = sum of this slice's row; then
  //    ranks splitting rows sum stats[0].
  virtual void adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                               Tensor col_sums, int64_t full_rows, int64_t full_cols,
                               float beta2) = 0;
  // 3. stats[1], stats[2] = this slice's sums of u^2 and param^2; then every rank holding a
  //    slice sums them.
  virtual void adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state,
                             Tensor col_state, int64_t full_rows, float grad_scale) = 0;
  // 4. The update, the RMS taken over the whole tensor's full_numel elements.
  virtual void adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                             Tensor stats, int64_t full_rows, int64_t full_numel, float lr,
                             float weight_decay, float grad_scale) = 0;
};

}  // namespace llmft
