// The fused residual add + norm forwards (Backend::residual_layernorm_forward and
// residual_rmsnorm_forward) on the CUDA backend: bit for bit the same as that backend's two
// hooks in turn (add_inplace, then the norm forward: Backend's own composition of them),
// and against the CPU within backend_conformance.cpp's bounds (the residual one rounding
// of its f32 sum; the norm's outputs within the dtype's relative L2 bound). Row widths the
// fused kernel holds in registers (5 to 12288, odd ones included) and one wider than it
// holds (20000), which falls back to the two passes. Skipped (77) without a GPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cuda/backend_pair.h"

namespace llmft {
namespace {

struct RowShape {
  int64_t N, C;
};
const RowShape kShapes[] = {{37, 5},   {150, 75}, {64, 768},  {16, 2048},
                            {8, 4096}, {4, 8192}, {4, 12288}, {3, 20000}};

// Two twins holding the same values: the residual each path adds into.
std::pair<Pair::Twin, Pair::Twin> same_twice(Pair& p, DType dt, int64_t N, int64_t C) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(N * C));
  for (float& v : values) v = normal(p.rng);
  return {p.make(dt, {N, C}, values), p.make(dt, {N, C}, values)};
}

void check_same_bits(Pair& p, const Tensor& fused, const Tensor& unfused, const char* what) {
  const bool same = p.read_gpu(fused) == p.read_gpu(unfused);
  const std::string message = std::string(what) + ": the fused kernel's bits against add then norm";
  CHECK_MESSAGE(same, message);
}

TEST_CASE("fused residual add + LayerNorm equals add_inplace then layernorm_forward") {
  for (const RowShape s : kShapes) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(s.C);
      Pair p;
      auto [residual, unfused_residual] = same_twice(p, dt, s.N, s.C);
      auto x = p.random(dt, {s.N, s.C}), w = p.random(dt, {s.C}), b = p.random(dt, {s.C});
      auto out = p.constant(dt, {s.N, s.C}, 0.0f), unfused_out = p.constant(dt, {s.N, s.C}, 0.0f);
      auto mean = p.constant(DType::f32, {s.N}, 0.0f), rstd = p.constant(DType::f32, {s.N}, 0.0f);
      auto unfused_mean = p.constant(DType::f32, {s.N}, 0.0f);
      auto unfused_rstd = p.constant(DType::f32, {s.N}, 0.0f);
      p.gpu->residual_layernorm_forward(residual.gpu, x.gpu, out.gpu, mean.gpu, rstd.gpu, w.gpu,
                                        b.gpu, 1e-5f);
      p.gpu->Backend::residual_layernorm_forward(unfused_residual.gpu, x.gpu, unfused_out.gpu,
                                                 unfused_mean.gpu, unfused_rstd.gpu, w.gpu, b.gpu,
                                                 1e-5f);
      check_same_bits(p, residual.gpu, unfused_residual.gpu, "residual");
      check_same_bits(p, out.gpu, unfused_out.gpu, "output");
      check_same_bits(p, mean.gpu, unfused_mean.gpu, "mean");
      check_same_bits(p, rstd.gpu, unfused_rstd.gpu, "rstd");
      p.cpu.residual_layernorm_forward(residual.cpu, x.cpu, out.cpu, mean.cpu, rstd.cpu, w.cpu,
                                       b.cpu, 1e-5f);
      p.expect_rounded_once({residual}, "residual_layernorm_forward's residual");
      p.adopt_gpu_values(residual);  // the norm read the residual rounded to the dtype
      p.cpu.layernorm_forward(out.cpu, mean.cpu, rstd.cpu, residual.cpu, w.cpu, b.cpu, 1e-5f);
      p.expect_close({out, mean, rstd}, "residual_layernorm_forward's norm");
    }
  }
}

TEST_CASE("fused residual add + RMSNorm equals add_inplace then rmsnorm_forward") {
  for (const RowShape s : kShapes) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(s.C);
      Pair p;
      auto [residual, unfused_residual] = same_twice(p, dt, s.N, s.C);
      auto x = p.random(dt, {s.N, s.C}), w = p.random(dt, {s.C});
      auto out = p.constant(dt, {s.N, s.C}, 0.0f), unfused_out = p.constant(dt, {s.N, s.C}, 0.0f);
      auto rstd = p.constant(DType::f32, {s.N}, 0.0f);
      auto unfused_rstd = p.constant(DType::f32, {s.N}, 0.0f);
      p.gpu->residual_rmsnorm_forward(residual.gpu, x.gpu, out.gpu, rstd.gpu, w.gpu, 1e-6f);
      p.gpu->Backend::residual_rmsnorm_forward(unfused_residual.gpu, x.gpu, unfused_out.gpu,
                                               unfused_rstd.gpu, w.gpu, 1e-6f);
      check_same_bits(p, residual.gpu, unfused_residual.gpu, "residual");
      check_same_bits(p, out.gpu, unfused_out.gpu, "output");
      check_same_bits(p, rstd.gpu, unfused_rstd.gpu, "rstd");
      p.cpu.residual_rmsnorm_forward(residual.cpu, x.cpu, out.cpu, rstd.cpu, w.cpu, 1e-6f);
      p.expect_rounded_once({residual}, "residual_rmsnorm_forward's residual");
      p.adopt_gpu_values(residual);
      p.cpu.rmsnorm_forward(out.cpu, rstd.cpu, residual.cpu, w.cpu, 1e-6f);
      p.expect_close({out, rstd}, "residual_rmsnorm_forward's norm");
    }
  }
}

// Norm weights are pieces of a unit's flat parameters and may start anywhere: one element
// past 16-byte alignment, every row is read element by element, with the same results.
TEST_CASE("fused residual add + norm with weights off 16-byte alignment") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t N = 16, C = 768;
    auto residual = p.random(dt, {N, C}, 2.0f), x = p.random(dt, {N, C});
    auto params = p.random(dt, {2 * C + 1});
    const Pair::Twin w{params.cpu.view(1, {C}), params.gpu.view(1, {C})};
    const Pair::Twin b{params.cpu.view(1 + C, {C}), params.gpu.view(1 + C, {C})};
    auto out = p.constant(dt, {N, C}, 0.0f);
    auto mean = p.constant(DType::f32, {N}, 0.0f), rstd = p.constant(DType::f32, {N}, 0.0f);
    p.cpu.residual_layernorm_forward(residual.cpu, x.cpu, out.cpu, mean.cpu, rstd.cpu, w.cpu, b.cpu,
                                     1e-5f);
    p.gpu->residual_layernorm_forward(residual.gpu, x.gpu, out.gpu, mean.gpu, rstd.gpu, w.gpu,
                                      b.gpu, 1e-5f);
    p.expect_rounded_once({residual}, "residual_layernorm_forward's residual, weights off");
    p.adopt_gpu_values(residual);  // the GPU's norm read the rounded residual
    p.cpu.layernorm_forward(out.cpu, mean.cpu, rstd.cpu, residual.cpu, w.cpu, b.cpu, 1e-5f);
    p.expect_close({out, mean, rstd}, "residual_layernorm_forward's norm, weights off");
    p.cpu.rmsnorm_forward(out.cpu, rstd.cpu, residual.cpu, w.cpu, 1e-6f);
    p.gpu->rmsnorm_forward(out.gpu, rstd.gpu, residual.gpu, w.gpu, 1e-6f);
    p.expect_close({out, rstd}, "rmsnorm_forward, weights off");
  }
}

}  // namespace
}  // namespace llmft
