// Pair: the CPU backend and the CUDA backend side by side, tensors with the same values on
// both, and the checks that hold the GPU's outputs to the CPU's under the bounds the GPU
// conformance programs share (backend_conformance.cpp explains them). GPU tests only.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend_registry.h"
#include "core/cpu/cpu_backend.h"
#include "core/host_convert.h"

namespace llmft {

inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 1e-5;
    case DType::bf16:
      return 2e-2;
    case DType::f16:
      return 3e-3;
    case DType::i32:
      break;
  }
  return 0.0;
}

// The most one rounding to nearest into `dtype` changes a value, relative: half an ulp of
// its significant bits.
inline double one_rounding(DType dtype) {
  switch (dtype) {
    case DType::bf16:
      return std::ldexp(1.0, -8);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::f32:
    case DType::i32:
      break;
  }
  return 0.0;
}

// ||a - b|| / ||b||, or ||a|| when b is all zeros.
inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    gap += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    scale += double(b[i]) * b[i];
  }
  return scale > 0 ? std::sqrt(gap / scale) : std::sqrt(gap);
}

// The two backends and a tensor on each with the same values.
struct Pair {
  CpuBackend cpu;
  std::unique_ptr<Backend> gpu = make_backend("cuda", NodePlacement{}, size_t{2} << 30);
  Allocator cpu_alloc{cpu.memory(), 0}, gpu_alloc{gpu->memory(), 0};
  std::vector<Buffer> buffers;
  std::mt19937_64 rng{17};

  struct Twin {
    Tensor cpu, gpu;
  };

  // Values rounded to `dtype`; the CPU side holds them in f32 (i32 stays i32).
  Twin make(DType dtype, Shape shape, const std::vector<float>& values) {
    const DType cpu_dtype = dtype == DType::i32 ? DType::i32 : DType::f32;
    const int64_t n = shape_numel(shape);
    buffers.push_back(cpu_alloc.allocate(n * dtype_size(cpu_dtype), MemoryCategory::other, "t"));
    const Tensor c = buffers.back().as(cpu_dtype, shape);
    buffers.push_back(gpu_alloc.allocate(n * dtype_size(dtype), MemoryCategory::other, "t"));
    const Tensor g = buffers.back().as(dtype, shape);
    if (dtype == DType::i32) {
      std::vector<int32_t> ids(values.begin(), values.end());
      cpu.copy_to_device(c, ids.data());
      gpu->copy_to_device(g, ids.data());
      return {c, g};
    }
    const std::vector<uint8_t> stored = to_dtype_bytes(values.data(), n, dtype);
    const std::vector<float> rounded = from_dtype_bytes(stored, dtype);
    cpu.copy_to_device(c, rounded.data());
    gpu->copy_to_device(g, stored.data());
    return {c, g};
  }
  Twin random(DType dtype, Shape shape, float scale = 1.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
    for (float& v : values) v = normal(rng);
    return make(dtype, std::move(shape), values);
  }
  Twin constant(DType dtype, Shape shape, float value) {
    return make(dtype, shape, std::vector<float>(static_cast<size_t>(shape_numel(shape)), value));
  }
  // Positions (B, T): first, first + 1, ... along each row, or with sample > 0 restarting
  // at 0 every `sample` tokens (samples packed into the rows).
  Twin positions(int64_t B, int64_t T, int64_t first, int64_t sample = 0) {
    std::vector<float> values(static_cast<size_t>(B * T));
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t t = static_cast<int64_t>(i) % T;
      values[i] = static_cast<float>(sample > 0 ? t % sample : first + t);
    }
    return make(DType::i32, {B, T}, values);
  }
  Twin tokens(Shape shape, int vocab) {
    std::vector<float> ids(static_cast<size_t>(shape_numel(shape)));
    for (float& id : ids) id = static_cast<float>(rng() % static_cast<uint64_t>(vocab));
    return make(DType::i32, std::move(shape), ids);
  }

  std::vector<float> read_cpu(const Tensor& t) {
    std::vector<float> out(static_cast<size_t>(t.numel()));
    cpu.copy_to_host(out.data(), t);
    return out;
  }
  std::vector<float> read_gpu(const Tensor& t) {
    std::vector<uint8_t> bytes(t.bytes());
    gpu->copy_to_host(bytes.data(), t);
    return from_dtype_bytes(bytes, t.dtype);
  }
  // The workspace the GPU's attention backward asks for this call (cuDNN's), or none.
  Tensor attention_workspace(const Twin& qkv, const Twin& positions, int64_t H, int64_t KVH) {
    const size_t bytes = gpu->attention_backward_workspace(
        qkv.gpu, positions.gpu, static_cast<int>(H), static_cast<int>(KVH));
    if (bytes == 0) return Tensor();
    buffers.push_back(gpu_alloc.allocate(bytes, MemoryCategory::workspace, "workspace"));
    return buffers.back().as(DType::f32, {static_cast<int64_t>(bytes / sizeof(float))});
  }
  // Gives the CPU side the GPU's values (rounded to its dtype), so that a hook fed by an
  // earlier one compares its own arithmetic, not the earlier rounding: an f32 output (the
  // log-sum-exp) is held to f32's tolerance.
  void adopt_gpu_values(const Twin& t) {
    const std::vector<float> values = read_gpu(t.gpu);
    cpu.copy_to_device(t.cpu, values.data());
  }
  // Checks every output twin within the tolerance of its GPU dtype.
  void expect_close(const std::vector<Twin>& outputs, const char* what) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const double error = relative_l2(read_gpu(outputs[i].gpu), read_cpu(outputs[i].cpu));
      const double limit = tolerance(outputs[i].gpu.dtype);
      // Printed whether or not it passes: the measured errors justify the bounds.
      MESSAGE(std::string(what) << " output " << i << " ("
                                << std::string(dtype_name(outputs[i].gpu.dtype))
                                << "): relative L2 error " << error << ", bound " << limit);
      CHECK(error <= limit);
    }
  }
  // Checks every output twin within one rounding into its GPU dtype of the CPU's f32 value
  // (plus the f32 bound: the two compute that value in other orders, with other exp/tanh).
  // Element by element, since one rounding's average error is well under its worst: each
  // element within u |cpu| (u = one_rounding, plus 1e-6 for f32's ulps) and 1e-5 of the
  // output's RMS (f32 differences under cancellation, transcendentals, fp16 subnormals).
  // Truncation, or arithmetic in the dtype, goes past it on some element.
  void expect_rounded_once(const std::vector<Twin>& outputs, const char* what) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::vector<float> gpu_values = read_gpu(outputs[i].gpu);
      const std::vector<float> cpu_values = read_cpu(outputs[i].cpu);
      const double u = one_rounding(outputs[i].gpu.dtype) + 1e-6;
      double square_sum = 0;
      for (float c : cpu_values) square_sum += double(c) * c;
      const double rms = std::sqrt(square_sum / std::max<size_t>(cpu_values.size(), 1));
      double worst = 0;  // the largest error as a share of its element's bound
      for (size_t e = 0; e < cpu_values.size(); ++e) {
        const double bound = u * std::fabs(cpu_values[e]) + tolerance(DType::f32) * rms;
        worst = std::max(worst, std::fabs(double(gpu_values[e]) - cpu_values[e]) / bound);
      }
      MESSAGE(std::string(what) << " output " << i << " ("
                                << std::string(dtype_name(outputs[i].gpu.dtype))
                                << "): worst element at " << worst << " of one rounding");
      CHECK(worst <= 1.0);
    }
  }
};

inline const DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

}  // namespace llmft
