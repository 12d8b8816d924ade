// Weight and bias gradients of 16-bit layers written into f32 sums (core/backend.h: a run
// with --grad-accum-dtype fp32 has backward add straight into its f32 gradient sums): the
// linear layer's weight-gradient GEMM (bf16/fp16 operands, f32 C/D) and bias column sums,
// the norms' weight and bias gradients, the embedding tables'. The CPU computes the same
// sums in f32 from the same rounded inputs, so the only difference left is the order of
// f32 additions: the f32 bound (relative L2 1e-5), far under the 2^-9 / 2^-12 a single
// rounding to bf16 / fp16 of the gradient would cost. Skipped (77) without a GPU.
#include <doctest/doctest.h>

#include <string>

#include "tests/cuda/backend_pair.h"

namespace llmft {
namespace {

const DType k16BitDtypes[] = {DType::bf16, DType::f16};

TEST_CASE("a linear layer's weight and bias gradients add into f32 sums") {
  for (DType dt : k16BitDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t N = 150, C = 48, OC = 75;
    auto x = p.random(dt, {N, C}), w = p.random(dt, {OC, C}, 0.2f), dout = p.random(dt, {N, OC});
    auto dx = p.random(dt, {N, C});
    auto dw = p.random(DType::f32, {OC, C}), db = p.random(DType::f32, {OC});
    for (int use = 0; use < 2; ++use) {  // twice: the second adds onto the first's sum
      p.cpu.linear_backward(dx.cpu, false, dw.cpu, db.cpu, dout.cpu, x.cpu, w.cpu);
      p.gpu->linear_backward(dx.gpu, false, dw.gpu, db.gpu, dout.gpu, x.gpu, w.gpu);
    }
    p.expect_close({dw, db}, "linear_backward into f32 sums");
  }
}

TEST_CASE("the norms' weight and bias gradients add into f32 sums") {
  for (DType dt : k16BitDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t N = 150, C = 75;
    auto x = p.random(dt, {N, C}, 2.0f), w = p.random(dt, {C}), b = p.random(dt, {C});
    auto out = p.constant(dt, {N, C}, 0.0f), dout = p.random(dt, {N, C});
    auto mean = p.constant(DType::f32, {N}, 0.0f), rstd = p.constant(DType::f32, {N}, 0.0f);
    auto dx = p.random(dt, {N, C});
    auto dw = p.random(DType::f32, {C}), db = p.random(DType::f32, {C});
    p.gpu->layernorm_forward(out.gpu, mean.gpu, rstd.gpu, x.gpu, w.gpu, b.gpu, 1e-5f);
    p.adopt_gpu_values(mean);  // both backwards read the GPU's statistics
    p.adopt_gpu_values(rstd);
    p.cpu.layernorm_backward(dx.cpu, dw.cpu, db.cpu, dout.cpu, x.cpu, w.cpu, mean.cpu, rstd.cpu);
    p.gpu->layernorm_backward(dx.gpu, dw.gpu, db.gpu, dout.gpu, x.gpu, w.gpu, mean.gpu, rstd.gpu);
    p.expect_close({dw, db}, "layernorm_backward into f32 sums");
    p.gpu->rmsnorm_forward(out.gpu, rstd.gpu, x.gpu, w.gpu, 1e-6f);
    p.adopt_gpu_values(rstd);
    p.cpu.rmsnorm_backward(dx.cpu, dw.cpu, dout.cpu, x.cpu, w.cpu, rstd.cpu);
    p.gpu->rmsnorm_backward(dx.gpu, dw.gpu, dout.gpu, x.gpu, w.gpu, rstd.gpu);
    p.expect_close({dw}, "rmsnorm_backward into f32 sums");
  }
}

TEST_CASE("the embedding tables' gradients add into f32 sums") {
  for (DType dt : k16BitDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t B = 2, T = 300, C = 48, vocab = 7;  // about 86 rows a token
    auto tokens = p.tokens({B, T}, vocab);
    auto dout = p.random(dt, {B, T, C});
    auto dwte = p.random(DType::f32, {vocab, C}), dwpe = p.random(DType::f32, {T, C});
    auto positions = p.positions(B, T, 0, 50);  // samples of 50: each position row gathers 12
    p.cpu.embedding_backward(dwte.cpu, dwpe.cpu, dout.cpu, tokens.cpu, positions.cpu, 0);
    p.gpu->embedding_backward(dwte.gpu, dwpe.gpu, dout.gpu, tokens.gpu, positions.gpu, 0);
    p.expect_close({dwte, dwpe}, "embedding_backward into f32 sums");
  }
}

}  // namespace
}  // namespace llmft
