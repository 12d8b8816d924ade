#include "core/cuda/cuda_backend.h"

#include <cublasLt.h>

#include <algorithm>
#include <vector>

#include "core/byte_size.h"
#include "core/cuda/attention_tensor_cores.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/cuda_kernels.h"
#include "core/error.h"

namespace llmft {
namespace {

struct CudaEvent : Event {
  cudaEvent_t event = nullptr;
  // Blocking sync: a host waiting for an event sleeps instead of spinning a core that the
  // host's own work (the offloaded optimizer's threads) wants.
  CudaEvent() { LLMFT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventBlockingSync)); }
  ~CudaEvent() override { cudaEventDestroy(event); }
};

cudaEvent_t event_of(const Event& e) {
  return static_cast<const CudaEvent&>(e).event;
}

float* f32(const Tensor& t) {
  if (!t.defined()) return nullptr;
  LLMFT_REQUIRE(t.dtype == DType::f32,
                "cuda backend: expected an f32 statistic, got " << dtype_name(t.dtype));
  return static_cast<float*>(t.data);
}

const int32_t* i32(const Tensor& t) {
  LLMFT_REQUIRE(t.dtype == DType::i32, "cuda backend: token tensor must be i32");
  return static_cast<const int32_t*>(t.data);
}

// Rows and width of a tensor seen as (N, last dim).
int64_t rows(const Tensor& t) {
  return t.dim(-1) == 0 ? 0 : t.numel() / t.dim(-1);  // a slice of no columns has no rows
}

// The common dtype of tensors that must share one (undefined ones are skipped).
DType same_dtype(std::initializer_list<const Tensor*> tensors, const char* hook) {
  DType dtype = DType::i32;
  bool first = true;
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    LLMFT_REQUIRE(first || t->dtype == dtype, "cuda backend: " << hook << " mixes "
                                                               << dtype_name(dtype) << " and "
                                                               << dtype_name(t->dtype));
    dtype = t->dtype;
    first = false;
  }
  return dtype;
}

// The dtype of weight or bias gradients (defined ones) that a hook computing in `compute`
// writes: that dtype, or f32 (a run summing gradients in fp32, core/backend.h).
DType param_grad_dtype(std::initializer_list<const Tensor*> grads, DType compute,
                       const char* hook) {
  const DType dtype = same_dtype(grads, hook);
  const bool any =
      std::any_of(grads.begin(), grads.end(), [](const Tensor* t) { return t->defined(); });
  if (!any) return compute;
  LLMFT_REQUIRE(dtype == compute || dtype == DType::f32,
                "cuda backend: " << hook << " writes " << dtype_name(dtype) << " gradients from "
                                 << dtype_name(compute) << " tensors");
  return dtype;
}

// Attention's kernels put sequences, heads and (the tensor-core ones) 64-row tiles of
// positions on the grid's y and z axes (65535 at most).
void require_attention_grid(int64_t sequences, int n_head, int64_t rows) {
  constexpr int64_t kGridLimit = 65535;
  LLMFT_REQUIRE(sequences <= kGridLimit && n_head <= kGridLimit,
                "cuda backend: attention over " << sequences << " sequences of " << n_head
                                                << " heads; at most " << kGridLimit
                                                << " of each in one call (lower --micro-batch)");
  LLMFT_REQUIRE(rows <= kGridLimit * 64, "cuda backend: attention over "
                                             << rows << " positions; at most " << kGridLimit * 64
                                             << " in one call (lower --seq-len)");
}

int64_t adalomo_cols(const Tensor& t) {
  return t.shape.size() == 2 ? t.dim(1) : 0;
}

}  // namespace

CudaBackend::CudaBackend(int device, size_t memory_bytes, int ranks_sharing,
                         const std::function<void()>& node_barrier)
    : device_(device), requested_bytes_(memory_bytes), ranks_sharing_(std::max(1, ranks_sharing)) {
  LLMFT_CUDA_CHECK(cudaSetDevice(device_));
  LLMFT_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device_));
  const std::string unsupported = cuda_device_unsupported_reason(device_, properties_);
  LLMFT_REQUIRE(unsupported.empty(), unsupported);
  LLMFT_CUDA_CHECK(cudaFree(nullptr));  // creates the context now
  LLMFT_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
  LLMFT_CUDA_CHECK(cudaStreamCreateWithFlags(&communication_, cudaStreamNonBlocking));
  gemm_ = std::make_unique<cuda::Gemm>();
  cudnn_attention_ = std::make_unique<cuda::CudnnAttentionRoute>();
  LLMFT_CUDA_CHECK(cudaMalloc(&partials_, sizeof(double) * 2 * cuda::kSumBlocks));
  launch_every_kernel();
  // Ranks sharing the GPU measure together, after all of them have set up and before any
  // reserves: the device then holds every sharing rank's fixed overhead (and whatever else
  // runs there), of which each counts its share, and each takes its share of what is free.
  if (node_barrier) node_barrier();
  size_t free = 0, total = 0;
  LLMFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (node_barrier) node_barrier();
  const size_t sharing = static_cast<size_t>(ranks_sharing_);
  fixed_overhead_ = (total - free) / sharing;
  LLMFT_REQUIRE(free > sharing * kRuntimeReserve,
                "cuda:" << device_ << ": only " << format_bytes(free) << " of device memory is free"
                        << (sharing > 1 ? " for " + std::to_string(sharing) + " ranks" : ""));
  shared_available_ = (free - sharing * kRuntimeReserve) / sharing;
}

CudaBackend::~CudaBackend() {
  // Destructors cannot throw: errors here mean the context is gone already.
  cudaDeviceSynchronize();
  memory_.reset();
  cudnn_attention_.reset();
  gemm_.reset();
  cudaFree(partials_);
  cudaStreamDestroy(communication_);
  cudaStreamDestroy(compute_);
}

CudaMemory& CudaBackend::slab() {
  if (memory_) return *memory_;
  size_t available = shared_available_;
  if (ranks_sharing_ == 1) {
    size_t free = 0, total = 0;
    LLMFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    communicator_overhead_ = total - free > fixed_overhead_ ? total - free - fixed_overhead_ : 0;
    available = free > kRuntimeReserve ? free - kRuntimeReserve : 0;
  }
  LLMFT_REQUIRE(available > 0,
                "cuda:" << device_ << ": no device memory is free after the runtime's "
                        << format_bytes(fixed_overhead_ + kRuntimeReserve)
                        << " and the communicators' " << format_bytes(communicator_overhead_)
                        << "; end the other processes on this GPU");
  LLMFT_REQUIRE(requested_bytes_ <= available,
                "--device-memory "
                    << format_bytes(requested_bytes_) << " is more than the "
                    << format_bytes(available) << " free on cuda:" << device_
                    << " after the runtime's " << format_bytes(fixed_overhead_ + kRuntimeReserve)
                    << " and the communicators' " << format_bytes(communicator_overhead_)
                    << "; lower --device-memory");
  memory_ = std::make_unique<CudaMemory>(requested_bytes_ > 0 ? requested_bytes_ : available,
                                         CudaMemory::placement_from_environment());
  return *memory_;
}

void CudaBackend::release_memory() {
  if (!memory_) return;
  LLMFT_REQUIRE(memory_->in_use() == 0, "internal: giving back the device memory while "
                                            << format_bytes(memory_->in_use())
                                            << " of it is still allocated");
  synchronize();
  memory_.reset();
}

size_t CudaBackend::memory_outside_allocator() {
  size_t free = 0, total = 0;
  LLMFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const size_t in_use = (total - free) / static_cast<size_t>(ranks_sharing_);
  const size_t slab_bytes = memory_ ? memory_->device_bytes() : 0;
  return in_use > slab_bytes ? in_use - slab_bytes : 0;
}

std::string CudaBackend::describe() const {
  int cublas_version = static_cast<int>(cublasLtGetVersion());
  std::string text =
      "cuda:" + std::to_string(device_) + " " + properties_.name + ", " +
      format_bytes(static_cast<double>(properties_.totalGlobalMem)) + ", compute capability " +
      std::to_string(properties_.major) + "." + std::to_string(properties_.minor) + "; cuBLASLt " +
      std::to_string(cublas_version) + "; " + cudnn_attention_->describe() + "; fixed overhead " +
      format_bytes(static_cast<double>(fixed_overhead_)) + " (measured)";
  if (!memory_) return text + ", no memory reserved yet";
  if (communicator_overhead_ > 0) {
    text += ", communicators " + format_bytes(static_cast<double>(communicator_overhead_)) +
            " (measured)";
  }
  return text + ", " + format_bytes(static_cast<double>(memory_->reserved())) +
         " reserved for the allocator";
}

void CudaBackend::launch_every_kernel() {
  // Tiny tensors in a scratch of their own: B 1, T 2, H 2, KVH 1, D 4, C 8, V 8; attention
  // again at each head size the tensor-core kernels take. Every output has a slot of its
  // own, so that no warm-up kernel races with itself (compute-sanitizer's racecheck runs
  // over the conformance tests, and a backend built in one would report this).
  const int64_t B = 1, T = 2, H = 2, KVH = 1, D = 4, C = H * D, W = (H + 2 * KVH) * D, V = 8;
  void* scratch = nullptr;
  constexpr size_t kSlot = 4096, kSlots = 56;
  LLMFT_CUDA_CHECK(cudaMalloc(&scratch, kSlots * kSlot));
  // On the compute queue: a plain cudaMemset runs on the legacy default stream, which the
  // non-blocking compute stream does not wait for.
  LLMFT_CUDA_CHECK(cudaMemsetAsync(scratch, 0, kSlots * kSlot, compute_));
  size_t next = 0;
  auto take = [&](DType dtype, Shape shape) {
    LLMFT_REQUIRE(next < kSlots, "internal: the kernel warm-up needs more scratch slots");
    return Tensor(static_cast<char*>(scratch) + kSlot * next++, dtype, std::move(shape));
  };
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    next = 0;
    const Tensor x = take(dtype, {B * T, C}), y = take(dtype, {B * T, C}), w = take(dtype, {C, C});
    const Tensor dx = take(dtype, {B * T, C}), dw = take(dtype, {C, C});
    const Tensor bias = take(dtype, {C}), dbias = take(dtype, {C}), dgamma = take(dtype, {C});
    const Tensor stat = take(DType::f32, {B * T});
    const Tensor stat2 = take(DType::f32, {B * T}), tokens = take(DType::i32, {B, T});
    const Tensor positions = take(DType::i32, {B, T});  // zeros: every token its own sample
    const Tensor qkv = take(dtype, {B, T, W}), dqkv = take(dtype, {B, T, W});
    const Tensor att = take(dtype, {B * T, C}).reshaped({B, T, C});
    const Tensor lse = take(DType::f32, {B, H, T}), logits = take(dtype, {B * T, V});
    const Tensor stats = take(DType::f32, {3, B * T}), scalar = take(DType::f32, {3});
    const Tensor master = take(DType::f32, {C}), m = take(DType::f32, {C}),
                 v = take(DType::f32, {C});
    const Tensor gate_up = take(dtype, {B * T, 2 * C}), dgate_up = take(dtype, {B * T, 2 * C});
    const Tensor rows_state = take(DType::f32, {C}), cols_state = take(DType::f32, {C});
    fill(x, 0.5f);
    convert(y, x);
    add_inplace(y, x);
    linear_forward(y, x, w, bias);
    linear_forward(y, x, w, take(dtype, {C + 1}).view(1, {C}));  // a bias off the epilogue
    // Operands off cuBLASLt's 16-byte alignment, as a piece of a unit's flat parameters
    // may start: the heuristic must still find an algorithm.
    const Tensor odd_x = take(dtype, {B * T * C + 1}).view(1, {B * T, C});
    const Tensor odd_w = take(dtype, {C * C + 1}).view(1, {C, C});
    linear_forward(take(dtype, {B * T * C + 1}).view(1, {B * T, C}), odd_x, odd_w, Tensor());
    linear_backward(dx, true, dw, dbias, y, x, w);
    embedding_forward(y.reshaped({B, T, C}), tokens, positions, w, x, 0);
    embedding_backward(dw, dx, x.reshaped({B, T, C}), tokens, positions, 0);
    layernorm_forward(y, stat, stat2, x, bias, bias, 1e-5f);
    layernorm_backward(dx, dgamma, dbias, y, x, bias, stat, stat2);
    rmsnorm_forward(y, stat, x, bias, 1e-5f);
    rmsnorm_backward(dx, dgamma, y, x, bias, stat);
    if (dtype != DType::f32) {  // weight gradients into f32 sums (core/backend.h)
      const Tensor dw_sum = take(DType::f32, {C, C}), db_sum = take(DType::f32, {C});
      const Tensor dgamma_sum = take(DType::f32, {C});
      linear_backward(Tensor(), false, dw_sum, db_sum, y, x, w);
      embedding_backward(dw_sum, Tensor(), x.reshaped({B, T, C}), tokens, positions, 0);
      layernorm_backward(dx, dgamma_sum, db_sum, y, x, bias, stat, stat2);
      rmsnorm_backward(dx, dgamma_sum, y, x, bias, stat);
    }
    residual_layernorm_forward(dx, x, y, stat, stat2, bias, bias, 1e-5f);
    residual_rmsnorm_forward(dx, x, y, stat, bias, 1e-5f);
    const RopeFrequencies freqs = rope_frequencies(10000.0f, RopeScaling{}, static_cast<int>(D));
    rope_forward(qkv, positions, static_cast<int>(H), static_cast<int>(KVH), freqs);
    rope_backward(qkv, positions, static_cast<int>(H), static_cast<int>(KVH), freqs);
    attention_forward(att, lse, qkv, positions, static_cast<int>(H), static_cast<int>(KVH), 0);
    attention_backward(dqkv, att, qkv, att, lse, positions, static_cast<int>(H),
                       static_cast<int>(KVH), Tensor());
    for (int64_t head : cuda::kTensorCoreHeadDims) {  // bf16/fp16 take the tensor-core kernels
      const Tensor head_qkv = take(dtype, {B, T, (H + 2 * KVH) * head});
      const Tensor head_dqkv = take(dtype, {B, T, (H + 2 * KVH) * head});
      const Tensor head_out = take(dtype, {B, T, H * head});
      attention_forward(head_out, lse, head_qkv, positions, static_cast<int>(H),
                        static_cast<int>(KVH), 0);
      attention_backward(head_dqkv, head_out, head_qkv, head_out, lse, positions,
                         static_cast<int>(H), static_cast<int>(KVH), Tensor());
    }
    gelu_forward(y, x);
    gelu_backward(dx, y, x);
    swiglu_forward(y, gate_up);
    swiglu_backward(dgate_up, gate_up, y);
    cross_entropy_max(stats, logits, V);
    cross_entropy_sums(stats, logits, tokens.reshaped({B * T}), 0, V);
    cross_entropy_finish(logits, scalar.view(0, {1}), stats, tokens.reshaped({B * T}), 0, V, 1.0f);
    sum_squares(scalar.view(0, {1}), x);
    adamw_update(master, bias, m, v, 0.0f, 0.9f, 0.99f, 1e-8f, 0.0f, 1.0f, 1.0f, 1.0f);
    sgd_update(bias, dbias, m, 0.0f, 0.9f, 0.0f, 1.0f);
    const Tensor matrix = w.view(0, {H, D}), dmatrix = dw.view(0, {H, D});
    adalomo_square_sums(rows_state.view(0, {H}), cols_state.view(0, {D}), dmatrix, 1.0f);
    adalomo_moments(m.view(0, {H}), v.view(0, {D}), scalar, rows_state.view(0, {H}),
                    cols_state.view(0, {D}), H, D, 0.5f);
    adalomo_norms(scalar, matrix, dmatrix, m.view(0, {H}), v.view(0, {D}), H, 1.0f);
    adalomo_apply(matrix, dmatrix, m.view(0, {H}), v.view(0, {D}), scalar, H, H * D, 0.0f, 0.0f,
                  1.0f);
  }
  synchronize();
  LLMFT_CUDA_CHECK(cudaFree(scratch));
}

void CudaBackend::synchronize() {
  LLMFT_CUDA_CHECK(cudaStreamSynchronize(compute_));
  LLMFT_CUDA_CHECK(cudaStreamSynchronize(communication_));
}

std::unique_ptr<Event> CudaBackend::create_event() {
  return std::make_unique<CudaEvent>();
}

void CudaBackend::record(Event& event, Queue queue) {
  LLMFT_CUDA_CHECK(
      cudaEventRecord(event_of(event), queue == Queue::compute ? compute_ : communication_));
}

void CudaBackend::wait(Queue queue, const Event& event) {
  LLMFT_CUDA_CHECK(
      cudaStreamWaitEvent(queue == Queue::compute ? compute_ : communication_, event_of(event), 0));
}

void CudaBackend::synchronize(const Event& event) {
  LLMFT_CUDA_CHECK(cudaEventSynchronize(event_of(event)));
}

double CudaBackend::elapsed_seconds(const Event& start, const Event& end) {
  float ms = 0.0f;
  LLMFT_CUDA_CHECK(cudaEventElapsedTime(&ms, event_of(start), event_of(end)));
  return ms / 1000.0;
}

void CudaBackend::copy_to_device(Tensor dst, const void* host_src) {
  // From pageable memory the copy has read the host buffer when the call returns. Copies
  // infer their direction from the addresses (unified addressing), so pinned host pool
  // tensors (host_pool_memory) go through the same calls.
  LLMFT_CUDA_CHECK(cudaMemcpyAsync(dst.data, host_src, dst.bytes(), cudaMemcpyDefault, compute_));
  cudnn_attention_->note_upload(dst, host_src);
}

void CudaBackend::copy_to_host(void* host_dst, Tensor src) {
  LLMFT_CUDA_CHECK(cudaMemcpyAsync(host_dst, src.data, src.bytes(), cudaMemcpyDefault, compute_));
  LLMFT_CUDA_CHECK(cudaStreamSynchronize(compute_));
}

void CudaBackend::copy(Tensor dst, Tensor src) {
  LLMFT_REQUIRE(dst.bytes() == src.bytes(), "internal: copy between tensors of different sizes");
  LLMFT_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.bytes(), cudaMemcpyDefault, compute_));
  cudnn_attention_->forget(dst);
}

void CudaBackend::fill(Tensor t, float value) {
  cuda::fill(t.data, t.dtype, value, t.numel(), compute_);
}

void CudaBackend::convert(Tensor dst, Tensor src) {
  LLMFT_REQUIRE(dst.numel() == src.numel(), "internal: convert between tensors of different sizes");
  cuda::convert(dst.data, dst.dtype, src.data, src.dtype, src.numel(), compute_);
}

// Row-major (N, C) x (OC, C)^T is column-major (OC, N) = W^T-stored-as-(C, OC) transposed
// times X-stored-as-(C, N): see core/cuda/gemm.h for the operands.
void CudaBackend::linear_forward(Tensor out, Tensor inp, Tensor weight, Tensor bias) {
  const DType dtype = same_dtype({&out, &inp, &weight, &bias}, "linear_forward");
  const int64_t N = rows(inp), C = inp.dim(-1), OC = weight.dim(0);
  gemm_->multiply(dtype, {weight.data, C, OC, C, true}, {inp.data, C, N, C, false}, out.data, dtype,
                  OC, 0.0f, bias.defined() ? bias.data : nullptr, compute_);
}

void CudaBackend::linear_gelu_forward(Tensor out, Tensor pre_activation, Tensor inp, Tensor weight,
                                      Tensor bias) {
  const DType dtype =
      same_dtype({&out, &pre_activation, &inp, &weight, &bias}, "linear_gelu_forward");
  const int64_t N = rows(inp), C = inp.dim(-1), OC = weight.dim(0);
  const void* bias_data = bias.defined() ? bias.data : nullptr;
  if (C == 0 || !cuda::Gemm::takes_gelu_epilogue(out.data, pre_activation.data, OC, bias_data)) {
    Backend::linear_gelu_forward(out, pre_activation, inp, weight, bias);
    return;
  }
  gemm_->multiply_gelu(dtype, {weight.data, C, OC, C, true}, {inp.data, C, N, C, false}, out.data,
                       pre_activation.data, OC, bias_data, compute_);
}

void CudaBackend::linear_backward(Tensor dinp, bool accumulate_dinp, Tensor dweight, Tensor dbias,
                                  Tensor dout, Tensor inp, Tensor weight) {
  const DType dtype = same_dtype({&dinp, &dout, &inp, &weight}, "linear_backward");
  const DType grad = param_grad_dtype({&dweight, &dbias}, dtype, "linear_backward");
  const int64_t N = rows(inp), C = inp.dim(-1), OC = weight.dim(0);
  if (dinp.defined()) {  // (N, C) = dout (N, OC) W (OC, C)
    gemm_->multiply(dtype, {weight.data, C, OC, C, false}, {dout.data, OC, N, OC, false}, dinp.data,
                    dtype, C, accumulate_dinp ? 1.0f : 0.0f, nullptr, compute_);
  }
  if (dweight.defined()) {  // (OC, C) += dout^T (OC, N) X (N, C)
    gemm_->multiply(dtype, {inp.data, C, N, C, false}, {dout.data, OC, N, OC, true}, dweight.data,
                    grad, C, 1.0f, nullptr, compute_);
  }
  if (dbias.defined()) cuda::add_column_sums(dbias.data, grad, dout.data, dtype, N, OC, compute_);
}

void CudaBackend::embedding_forward(Tensor out, Tensor tokens, Tensor positions, Tensor wte,
                                    Tensor wpe, int64_t vocab_start) {
  const DType dtype = same_dtype({&out, &wte, &wpe}, "embedding_forward");
  cuda::embedding_forward(out.data, i32(tokens), i32(positions), wte.data,
                          wpe.defined() ? wpe.data : nullptr, dtype, tokens.numel(), wte.dim(1),
                          vocab_start, wte.dim(0), compute_);
}

void CudaBackend::embedding_backward(Tensor dwte, Tensor dwpe, Tensor dout, Tensor tokens,
                                     Tensor positions, int64_t vocab_start) {
  const DType dtype = dout.dtype;
  const DType grad = param_grad_dtype({&dwte, &dwpe}, dtype, "embedding_backward");
  cuda::embedding_backward(dwte.data, dwpe.defined() ? dwpe.data : nullptr, grad, dout.data,
                           i32(tokens), i32(positions), dtype, tokens.numel(), dwte.dim(1),
                           vocab_start, dwte.dim(0), dwpe.defined() ? dwpe.dim(0) : 0, compute_);
}

void CudaBackend::layernorm_forward(Tensor out, Tensor mean, Tensor rstd, Tensor inp, Tensor weight,
                                    Tensor bias, float eps) {
  const DType dtype = same_dtype({&out, &inp, &weight, &bias}, "layernorm_forward");
  cuda::layernorm_forward(out.data, f32(mean), f32(rstd), inp.data, weight.data, bias.data, dtype,
                          rows(inp), inp.dim(-1), eps, compute_);
}

void CudaBackend::layernorm_backward(Tensor dinp, Tensor dweight, Tensor dbias, Tensor dout,
                                     Tensor inp, Tensor weight, Tensor mean, Tensor rstd) {
  const DType dtype = same_dtype({&dinp, &dout, &inp, &weight}, "layernorm_backward");
  const DType grad = param_grad_dtype({&dweight, &dbias}, dtype, "layernorm_backward");
  cuda::layernorm_backward(dinp.data, dweight.data, dbias.data, grad, dout.data, inp.data,
                           weight.data, f32(mean), f32(rstd), dtype, rows(inp), inp.dim(-1),
                           compute_);
}

void CudaBackend::rmsnorm_forward(Tensor out, Tensor rstd, Tensor inp, Tensor weight, float eps) {
  const DType dtype = same_dtype({&out, &inp, &weight}, "rmsnorm_forward");
  cuda::rmsnorm_forward(out.data, f32(rstd), inp.data, weight.data, dtype, rows(inp), inp.dim(-1),
                        eps, compute_);
}

void CudaBackend::rmsnorm_backward(Tensor dinp, Tensor dweight, Tensor dout, Tensor inp,
                                   Tensor weight, Tensor rstd) {
  const DType dtype = same_dtype({&dinp, &dout, &inp, &weight}, "rmsnorm_backward");
  const DType grad = param_grad_dtype({&dweight}, dtype, "rmsnorm_backward");
  cuda::rmsnorm_backward(dinp.data, dweight.data, grad, dout.data, inp.data, weight.data, f32(rstd),
                         dtype, rows(inp), inp.dim(-1), compute_);
}

void CudaBackend::residual_layernorm_forward(Tensor residual, Tensor x, Tensor out, Tensor mean,
                                             Tensor rstd, Tensor weight, Tensor bias, float eps) {
  const DType dtype =
      same_dtype({&residual, &x, &out, &weight, &bias}, "residual_layernorm_forward");
  cuda::residual_layernorm_forward(residual.data, x.data, out.data, f32(mean), f32(rstd),
                                   weight.data, bias.data, dtype, rows(residual), residual.dim(-1),
                                   eps, compute_);
}

void CudaBackend::residual_rmsnorm_forward(Tensor residual, Tensor x, Tensor out, Tensor rstd,
                                           Tensor weight, float eps) {
  const DType dtype = same_dtype({&residual, &x, &out, &weight}, "residual_rmsnorm_forward");
  cuda::residual_rmsnorm_forward(residual.data, x.data, out.data, f32(rstd), weight.data, dtype,
                                 rows(residual), residual.dim(-1), eps, compute_);
}

void CudaBackend::rope_forward(Tensor qkv, Tensor positions, int n_head, int n_kv_head,
                               const RopeFrequencies& freqs) {
  const int64_t D = rope_head_size(qkv.dim(-1), n_head, n_kv_head, freqs);
  cuda::rope(qkv.data, i32(positions), qkv.dtype, positions.numel(), n_head, n_kv_head, D, freqs,
             false, compute_);
}

void CudaBackend::rope_backward(Tensor dqkv, Tensor positions, int n_head, int n_kv_head,
                                const RopeFrequencies& freqs) {
  const int64_t D = rope_head_size(dqkv.dim(-1), n_head, n_kv_head, freqs);
  cuda::rope(dqkv.data, i32(positions), dqkv.dtype, positions.numel(), n_head, n_kv_head, D, freqs,
             true, compute_);
}

void CudaBackend::attention_forward(Tensor out, Tensor lse, Tensor qkv, Tensor positions,
                                    int n_head, int n_kv_head, int64_t first_query) {
  const DType dtype = same_dtype({&out, &qkv}, "attention_forward");
  const int64_t B = qkv.dim(0), D = qkv.dim(-1) / (n_head + 2 * n_kv_head);
  const int64_t T = out.numel() / (B * n_head * D);
  require_attention_grid(B, n_head, qkv.dim(1));
  if (cudnn_attention_->forward(out, lse, qkv, positions, n_head, n_kv_head, first_query,
                                compute_)) {
    return;
  }
  cuda::attention_forward(out.data, f32(lse), qkv.data, i32(positions), dtype, B, T, n_head,
                          n_kv_head, D, qkv.dim(1), first_query, compute_);
}

AttentionWorkspaceRule CudaBackend::attention_workspace_rule() const {
  return cudnn_attention_->rule();
}

size_t CudaBackend::attention_backward_workspace(Tensor qkv, Tensor positions, int n_head,
                                                 int n_kv_head) {
  return cudnn_attention_->backward_workspace(qkv, positions, n_head, n_kv_head);
}

void CudaBackend::attention_backward(Tensor dqkv, Tensor dout, Tensor qkv, Tensor out, Tensor lse,
                                     Tensor positions, int n_head, int n_kv_head,
                                     Tensor workspace) {
  const DType dtype = same_dtype({&dqkv, &dout, &qkv, &out}, "attention_backward");
  const int64_t D = out.dim(-1) / n_head;
  require_attention_grid(qkv.dim(0), n_head, qkv.dim(1));
  if (cudnn_attention_->backward(dqkv, dout, qkv, out, lse, positions, n_head, n_kv_head, workspace,
                                 compute_)) {
    return;
  }
  cuda::attention_backward(dqkv.data, dout.data, qkv.data, out.data, f32(lse), i32(positions),
                           dtype, qkv.dim(0), qkv.dim(1), n_head, n_kv_head, D, compute_);
}

void CudaBackend::gelu_forward(Tensor out, Tensor inp) {
  cuda::gelu_forward(out.data, inp.data, same_dtype({&out, &inp}, "gelu_forward"), inp.numel(),
                     compute_);
}

void CudaBackend::gelu_backward(Tensor dinp, Tensor inp, Tensor dout) {
  cuda::gelu_backward(dinp.data, inp.data, dout.data,
                      same_dtype({&dinp, &inp, &dout}, "gelu_backward"), inp.numel(), compute_);
}

void CudaBackend::swiglu_forward(Tensor out, Tensor gate_up) {
  cuda::swiglu_forward(out.data, gate_up.data, same_dtype({&out, &gate_up}, "swiglu_forward"),
                       rows(out), out.dim(-1), compute_);
}

void CudaBackend::swiglu_backward(Tensor dgate_up, Tensor gate_up, Tensor dout) {
  cuda::swiglu_backward(dgate_up.data, gate_up.data, dout.data,
                        same_dtype({&dgate_up, &gate_up, &dout}, "swiglu_backward"), rows(dout),
                        dout.dim(-1), compute_);
}

void CudaBackend::add_inplace(Tensor acc, Tensor x) {
  LLMFT_REQUIRE(acc.numel() == x.numel(), "internal: add_inplace of tensors of different sizes");
  cuda::add_inplace(acc.data, acc.dtype, x.data, x.dtype, acc.numel(), compute_);
}

void CudaBackend::cross_entropy_max(Tensor stats, Tensor logits, int64_t valid) {
  cuda::cross_entropy_max(f32(stats), logits.data, logits.dtype, rows(logits), logits.dim(-1),
                          valid, compute_);
}

void CudaBackend::cross_entropy_sums(Tensor stats, Tensor logits, Tensor targets,
                                     int64_t vocab_start, int64_t valid) {
  cuda::cross_entropy_sums(f32(stats), logits.data, i32(targets), logits.dtype, rows(logits),
                           logits.dim(-1), valid, vocab_start, compute_);
}

void CudaBackend::cross_entropy_finish(Tensor logits, Tensor loss_sum, Tensor stats, Tensor targets,
                                       int64_t vocab_start, int64_t valid, float grad_scale) {
  cuda::cross_entropy_finish(logits.data, f32(loss_sum), f32(stats), i32(targets), logits.dtype,
                             rows(logits), logits.dim(-1), valid, vocab_start, grad_scale,
                             compute_);
}

void CudaBackend::sum_squares(Tensor sum_sq, Tensor x) {
  cuda::sum_squares(f32(sum_sq), x.data, x.dtype, x.numel(), partials_, compute_);
}

void CudaBackend::adamw_update(Tensor param, Tensor grad, Tensor m, Tensor v, float lr, float beta1,
                               float beta2, float eps, float weight_decay, float grad_scale,
                               float bias_correction1, float bias_correction2) {
  cuda::adamw_update(f32(param), grad.data, grad.dtype, f32(m), f32(v), param.numel(), lr, beta1,
                     beta2, eps, weight_decay, grad_scale, bias_correction1, bias_correction2,
                     compute_);
}

void CudaBackend::sgd_update(Tensor param, Tensor grad, Tensor momentum_buf, float lr,
                             float momentum, float weight_decay, float grad_scale) {
  cuda::sgd_update(param.data, param.dtype, grad.data, grad.dtype, f32(momentum_buf), param.numel(),
                   lr, momentum, weight_decay, grad_scale, compute_);
}

void CudaBackend::adalomo_square_sums(Tensor row_sums, Tensor col_sums, Tensor grad,
                                      float grad_scale) {
  cuda::adalomo_square_sums(f32(row_sums), f32(col_sums), grad.data, grad.dtype, grad.dim(0),
                            adalomo_cols(grad), grad_scale, compute_);
}

void CudaBackend::adalomo_moments(Tensor row_state, Tensor col_state, Tensor stats, Tensor row_sums,
                                  Tensor col_sums, int64_t full_rows, int64_t full_cols,
                                  float beta2) {
  cuda::adalomo_moments(f32(row_state), f32(col_state), f32(stats), f32(row_sums), f32(col_sums),
                        row_state.numel(), col_state.defined() ? col_state.numel() : 0, full_rows,
                        full_cols, beta2, compute_);
}

void CudaBackend::adalomo_norms(Tensor stats, Tensor param, Tensor grad, Tensor row_state,
                                Tensor col_state, int64_t full_rows, float grad_scale) {
  cuda::adalomo_norms(f32(stats), param.data, param.dtype, grad.data, grad.dtype, f32(row_state),
                      f32(col_state), param.dim(0), adalomo_cols(param), full_rows, grad_scale,
                      partials_, compute_);
}

void CudaBackend::adalomo_apply(Tensor param, Tensor grad, Tensor row_state, Tensor col_state,
                                Tensor stats, int64_t full_rows, int64_t full_numel, float lr,
                                float weight_decay, float grad_scale) {
  cuda::adalomo_apply(param.data, param.dtype, grad.data, grad.dtype, f32(row_state),
                      f32(col_state), f32(stats), param.dim(0), adalomo_cols(param), full_rows,
                      full_numel, lr, weight_decay, grad_scale, compute_);
}

}  // namespace llmft
