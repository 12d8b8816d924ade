// One attention call, forward then backward, on a fresh CUDA backend over given bf16
// inputs, for the GPU tests that hold cuDNN's attention against our kernels (the backend
// routes by LLMFT_CUDNN_ATTENTION, set by the caller). GPU tests only.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/attention_workspace.h"
#include "core/backend_registry.h"
#include "core/host_convert.h"
#include "tests/cuda/backend_pair.h"

namespace llmft::cuda {

// bf16 values of N(0, 1) as the device stores them, and the same rounded values in f32.
struct Values {
  std::vector<uint8_t> stored;
  std::vector<float> rounded;
};

inline Values random_bf16(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = normal(rng);
  Values out{to_dtype_bytes(values.data(), n, DType::bf16), {}};
  out.rounded = from_dtype_bytes(out.stored, DType::bf16);
  return out;
}

// What a run wrote: out (B, T, H D), lse (B H T floats, in the layout the forward chose) and
// dqkv, as f32.
struct AttentionRun {
  std::vector<float> out, lse, dqkv;
};

// Forward, then backward with the workspace the backend asks for. Every tensor is followed
// by 1 MiB of NaN: a kernel that reads past a tensor's end, even into rows it then masks
// (a probability of 0 times NaN is NaN), writes NaN, which the callers' bounds refuse.
inline AttentionRun run_attention(const AttentionShape& s, const Values& qkv, const Values& dout,
                                  const std::vector<int32_t>& positions) {
  auto backend = make_backend("cuda", NodePlacement{}, size_t{4} << 30);
  Allocator alloc(backend->memory(), 0);
  const int64_t W = (s.H + 2 * s.KVH) * s.D;
  constexpr int64_t kGuardFloats = (int64_t{1} << 20) / sizeof(float);
  std::vector<Buffer> buffers;
  auto take = [&](DType dtype, Shape shape) {
    buffers.push_back(alloc.allocate(shape_numel(shape) * dtype_size(dtype), MemoryCategory::other,
                                     "attention test tensor"));
    const Tensor taken = buffers.back().as(dtype, std::move(shape));
    buffers.push_back(alloc.allocate(kGuardFloats * sizeof(float), MemoryCategory::other,
                                     "attention test guard"));
    backend->fill(buffers.back().as(DType::f32, {kGuardFloats}), std::nanf(""));
    return taken;
  };
  const Tensor q = take(DType::bf16, {s.B, s.T, W}), dq = take(DType::bf16, {s.B, s.T, W});
  const Tensor out = take(DType::bf16, {s.B, s.T, s.H * s.D});
  const Tensor d_out = take(DType::bf16, {s.B, s.T, s.H * s.D});
  const Tensor lse = take(DType::f32, {s.B, s.H, s.T}), pos = take(DType::i32, {s.B, s.T});
  backend->copy_to_device(q, qkv.stored.data());
  backend->copy_to_device(d_out, dout.stored.data());
  backend->copy_to_device(pos, positions.data());
  const int H = static_cast<int>(s.H), KVH = static_cast<int>(s.KVH);
  const size_t bytes = backend->attention_backward_workspace(q, pos, H, KVH);
  const Tensor workspace =
      bytes == 0 ? Tensor() : take(DType::f32, {static_cast<int64_t>(bytes / sizeof(float))});
  backend->attention_forward(out, lse, q, pos, H, KVH, 0);
  backend->attention_backward(dq, d_out, q, out, lse, pos, H, KVH, workspace);
  auto read = [&](const Tensor& t) {
    std::vector<uint8_t> bytes_read(t.bytes());
    backend->copy_to_host(bytes_read.data(), t);
    return from_dtype_bytes(bytes_read, t.dtype);
  };
  return {read(out), read(lse), read(dq)};
}

// values[first, first + count).
inline std::vector<float> slice(const std::vector<float>& values, int64_t first, int64_t count) {
  return {values.begin() + first, values.begin() + first + count};
}

}  // namespace llmft::cuda
