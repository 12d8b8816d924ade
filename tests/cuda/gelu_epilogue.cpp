// GPT-2's MLP input layer with its GELU (Backend::linear_gelu_forward) on the CUDA
// backend: one cuBLASLt product whose bias + GELU epilogue writes both the pre-activation
// and its GELU where the operands allow (16-byte aligned, an output width that is a
// multiple of 8), and the two hooks otherwise. Both outputs against the CPU's linear layer
// and tanh GELU within backend_conformance.cpp's bounds per dtype; in f32 that bound (1e-5)
// also tells cuBLASLt's GELU from the exact erf form, which differs by up to 1e-3.
// Skipped (77) without a GPU.
#include <doctest/doctest.h>

#include <string>

#include "tests/cuda/backend_pair.h"

namespace llmft {
namespace {

TEST_CASE("a linear layer with its GELU in one product equals the two hooks") {
  for (const int64_t OC : {int64_t{96}, int64_t{75}}) {  // the epilogue; the two hooks
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(OC);
      Pair p;
      const int64_t N = 150, C = 48;
      auto x = p.random(dt, {N, C}), w = p.random(dt, {OC, C}, 0.3f), b = p.random(dt, {OC});
      auto pre = p.constant(dt, {N, OC}, 0.0f), out = p.constant(dt, {N, OC}, 0.0f);
      p.cpu.linear_gelu_forward(out.cpu, pre.cpu, x.cpu, w.cpu, b.cpu);
      p.gpu->linear_gelu_forward(out.gpu, pre.gpu, x.gpu, w.gpu, b.gpu);
      p.expect_close({pre, out}, "linear_gelu_forward");
    }
  }
}

}  // namespace
}  // namespace llmft
