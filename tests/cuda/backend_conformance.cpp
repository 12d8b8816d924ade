// Backend conformance, in the style of ggml's test-backend-ops: every Backend hook on the
// CUDA backend against the CPU backend, in f32, bf16 and fp16, on odd shapes (3 heads,
// sequence 37, a vocabulary of 101 with padding). Inputs are drawn in f32 and rounded to
// the dtype, and the CPU computes from the rounded values in f32, so what differs is the
// GPU's arithmetic and its rounding of what it stores:
//  - f32: the same sums in other orders (cuBLASLt's blocking, tile-wise softmax) and other
//    exp/tanh implementations, within ulps: relative L2 error <= 1e-5 (the fp32 parity
//    bound of tests/support/parity.h).
//  - bf16 / fp16: the GPU rounds each stored result (and intermediates kept in the dtype,
//    e.g. attention's output before its backward reads it, and the tensor-core attention's
//    probabilities and dS before their products) to 8 / 11 significant bits: at most
//    2^-8 / 2^-11 relative per rounding (2^-9 / 2^-12 on average), a few roundings deep:
//    relative L2 error <= 2e-2 / 3e-3.
//  - Hooks whose every output is one rounding of an f32 value computed from the same
//    inputs (embedding, rotary embedding, activations) are held to that one rounding
//    element by element (2^-8 / 2^-11 of each value, plus 1e-5 of the output's RMS for
//    f32 differences and transcendentals): tight enough to tell f32 arithmetic from
//    arithmetic in the dtype, or rounding to nearest from truncation.
//  - fill and convert round to nearest as the host does (core/half.h): bit for bit.
// Without a GPU (or in a build without CUDA) the program reports itself skipped (77).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/rope_frequencies.h"
#include "tests/cuda/backend_pair.h"
#include "tests/support/scoped_environment.h"

namespace llmft {
namespace {

TEST_CASE("linear layers, forward and backward, with and without bias") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t N = 37, C = 48, OC = 75;
    auto x = p.random(dt, {N, C}), w = p.random(dt, {OC, C}, 0.2f), b = p.random(dt, {OC});
    auto out = p.constant(dt, {N, OC}, 0.0f), dout = p.random(dt, {N, OC});
    auto dx = p.random(dt, {N, C}), dw = p.random(dt, {OC, C}), db = p.random(dt, {OC});
    for (bool bias : {false, true}) {
      p.cpu.linear_forward(out.cpu, x.cpu, w.cpu, bias ? b.cpu : Tensor());
      p.gpu->linear_forward(out.gpu, x.gpu, w.gpu, bias ? b.gpu : Tensor());
      p.expect_close({out}, "linear_forward");
    }
    // Operands one element past an allocation's start, as pieces of a unit's flat
    // parameters can be: only element-aligned (the bias then bypasses the epilogue).
    auto shifted = p.random(dt, {N * C + OC * C + OC + 3});
    const auto piece = [&](int64_t offset, Shape shape) {
      return Pair::Twin{shifted.cpu.view(offset, shape), shifted.gpu.view(offset, shape)};
    };
    auto odd_x = piece(1, {N, C}), odd_w = piece(N * C + 2, {OC, C});
    auto odd_b = piece(N * C + OC * C + 3, {OC});
    p.cpu.linear_forward(out.cpu, odd_x.cpu, odd_w.cpu, odd_b.cpu);
    p.gpu->linear_forward(out.gpu, odd_x.gpu, odd_w.gpu, odd_b.gpu);
    p.expect_close({out}, "linear_forward (unaligned operands)");
    p.cpu.linear_backward(dx.cpu, true, dw.cpu, db.cpu, dout.cpu, x.cpu, w.cpu);
    p.gpu->linear_backward(dx.gpu, true, dw.gpu, db.gpu, dout.gpu, x.gpu, w.gpu);
    p.expect_close({dx, dw, db}, "linear_backward");
    // Over no rows (a rank's empty slice): the gradients it adds to stay as they were; the
    // weight gradient's product has no inner dimension.
    auto no_rows = p.random(dt, {0, OC}), no_inputs = p.random(dt, {0, C});
    p.cpu.linear_backward(no_inputs.cpu, false, dw.cpu, db.cpu, no_rows.cpu, no_inputs.cpu, w.cpu);
    p.gpu->linear_backward(no_inputs.gpu, false, dw.gpu, db.gpu, no_rows.gpu, no_inputs.gpu, w.gpu);
    p.expect_close({dw, db}, "linear_backward over no rows");
    // Over 1100 rows: the bias gradient's column sums run their loop of loads 8 rows
    // ahead (column_sums.cuh) as well as its remainder.
    const int64_t many = 1100;
    auto many_x = p.random(dt, {many, C}), many_dout = p.random(dt, {many, OC});
    auto many_dx = p.random(dt, {many, C});
    p.cpu.linear_backward(many_dx.cpu, true, dw.cpu, db.cpu, many_dout.cpu, many_x.cpu, w.cpu);
    p.gpu->linear_backward(many_dx.gpu, true, dw.gpu, db.gpu, many_dout.gpu, many_x.gpu, w.gpu);
    p.expect_close({many_dx, dw, db}, "linear_backward over 1100 rows");
  }
}

TEST_CASE("embedding with positions and a vocabulary slice") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t B = 2, T = 37, C = 48, rows = 51, start = 50;  // a slice of a 101 vocabulary
    auto tokens = p.tokens({B, T}, 101);
    auto wte = p.random(dt, {rows, C}), wpe = p.random(dt, {T + 3, C});
    auto out = p.constant(dt, {B, T, C}, 0.0f), dout = p.random(dt, {B, T, C});
    auto dwte = p.random(dt, {rows, C}), dwpe = p.random(dt, {T + 3, C});
    auto stream = p.positions(B, T, 3), packed = p.positions(B, T, 0, 10);
    p.cpu.embedding_forward(out.cpu, tokens.cpu, stream.cpu, wte.cpu, wpe.cpu, start);
    p.gpu->embedding_forward(out.gpu, tokens.gpu, stream.gpu, wte.gpu, wpe.gpu, start);
    p.expect_rounded_once({out}, "embedding_forward");
    p.cpu.embedding_backward(dwte.cpu, dwpe.cpu, dout.cpu, tokens.cpu, stream.cpu, start);
    p.gpu->embedding_backward(dwte.gpu, dwpe.gpu, dout.gpu, tokens.gpu, stream.gpu, start);
    p.expect_rounded_once({dwte, dwpe}, "embedding_backward");
    // Packed samples of 10: each position row gathers several tokens' gradients. Both
    // sides first take the GPU's gradients, rounded to the dtype, as their starting point:
    // the CPU's f32 copies are not rounded, and a second rounding on top of the first
    // would exceed one rounding of the final value wherever the sum cancels (the first
    // H200 run measured 11-25 roundings when this second call started from the first's).
    p.adopt_gpu_values(dwte);
    p.adopt_gpu_values(dwpe);
    p.cpu.embedding_backward(dwte.cpu, dwpe.cpu, dout.cpu, tokens.cpu, packed.cpu, start);
    p.gpu->embedding_backward(dwte.gpu, dwpe.gpu, dout.gpu, tokens.gpu, packed.gpu, start);
    p.expect_rounded_once({dwte, dwpe}, "embedding_backward (packed samples)");
  }
}

TEST_CASE("embedding backward rounds a frequent token's row once") {
  // Five tokens over 1200 positions (five tiles of the kernel's 256, two column blocks,
  // one partial): each row sums about 240 gradient rows. The GPU adds them in f32 in the
  // CPU's order and rounds the row once, so the gap is one rounding to nearest: none in
  // f32, at most 2^-8 / 2^-11 relative (half an ulp of 8 / 11 significant bits) in bf16 /
  // fp16, where rounding each addition would lose about sqrt(240) times that.
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t B = 2, T = 600, C = 300, vocab = 5;
    auto tokens = p.tokens({B, T}, vocab);
    auto dout = p.random(dt, {B, T, C}), dwte = p.random(dt, {vocab, C});
    auto positions = p.positions(B, T, 0);
    p.cpu.embedding_backward(dwte.cpu, Tensor(), dout.cpu, tokens.cpu, positions.cpu, 0);
    p.gpu->embedding_backward(dwte.gpu, Tensor(), dout.gpu, tokens.gpu, positions.gpu, 0);
    CHECK(relative_l2(p.read_gpu(dwte.gpu), p.read_cpu(dwte.cpu)) <= one_rounding(dt));
  }
}

// Column sums add 64 row slots of 16 columns a block: 150 rows take two laps and part of
// a third, 1100 rows the loop that loads 8 laps ahead and then single laps; 75, 5 and 16
// columns end a block short, fill less than one, and fill one.
TEST_CASE("layernorm and rmsnorm, forward and backward") {
  struct Shape {
    int64_t N, C;
  };
  // Rows held in registers one and two packs a thread (4096, 12288) and wider than they
  // hold (20000: a warp a row) besides the small and odd ones.
  for (const Shape shape : {Shape{37, 75}, Shape{150, 75}, Shape{1100, 75}, Shape{150, 5},
                            Shape{70, 16}, Shape{6, 4096}, Shape{4, 12288}, Shape{3, 20000}}) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(shape.N);
      CAPTURE(shape.C);
      Pair p;
      const int64_t N = shape.N, C = shape.C;
      auto x = p.random(dt, {N, C}, 2.0f), w = p.random(dt, {C}), b = p.random(dt, {C});
      auto out = p.constant(dt, {N, C}, 0.0f), dout = p.random(dt, {N, C});
      auto mean = p.constant(DType::f32, {N}, 0.0f), rstd = p.constant(DType::f32, {N}, 0.0f);
      auto dx = p.random(dt, {N, C}), dw = p.random(dt, {C}), db = p.random(dt, {C});
      p.cpu.layernorm_forward(out.cpu, mean.cpu, rstd.cpu, x.cpu, w.cpu, b.cpu, 1e-5f);
      p.gpu->layernorm_forward(out.gpu, mean.gpu, rstd.gpu, x.gpu, w.gpu, b.gpu, 1e-5f);
      p.expect_close({out, mean, rstd}, "layernorm_forward");
      p.cpu.layernorm_backward(dx.cpu, dw.cpu, db.cpu, dout.cpu, x.cpu, w.cpu, mean.cpu, rstd.cpu);
      p.gpu->layernorm_backward(dx.gpu, dw.gpu, db.gpu, dout.gpu, x.gpu, w.gpu, mean.gpu, rstd.gpu);
      p.expect_close({dx, dw, db}, "layernorm_backward");
      p.cpu.rmsnorm_forward(out.cpu, rstd.cpu, x.cpu, w.cpu, 1e-6f);
      p.gpu->rmsnorm_forward(out.gpu, rstd.gpu, x.gpu, w.gpu, 1e-6f);
      p.expect_close({out, rstd}, "rmsnorm_forward");
      p.cpu.rmsnorm_backward(dx.cpu, dw.cpu, dout.cpu, x.cpu, w.cpu, rstd.cpu);
      p.gpu->rmsnorm_backward(dx.gpu, dw.gpu, dout.gpu, x.gpu, w.gpu, rstd.gpu);
      p.expect_close({dx, dw}, "rmsnorm_backward");
    }
  }
}

TEST_CASE("rotary embedding, attention (grouped queries, decoding) and activations") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t B = 2, T = 37, H = 6, KVH = 2, D = 16, W = (H + 2 * KVH) * D;
    // Llama 3.1's scaling from a 64-token context: with D 16 pair 0 keeps its frequency,
    // pair 1 is blended and the rest are divided by the factor.
    const RopeFrequencies freqs = rope_frequencies(
        500000.0f, RopeScaling{RopeType::llama3, 32.0, 1.0, 4.0, 64}, static_cast<int>(D));
    for (const int64_t sample : {int64_t{0}, int64_t{12}}) {  // one stream; samples of 12
      CAPTURE(sample);
      auto positions = p.positions(B, T, sample > 0 ? 0 : 3, sample);
      auto x = p.random(dt, {B, T, W});
      p.cpu.rope_forward(x.cpu, positions.cpu, H, KVH, freqs);
      p.gpu->rope_forward(x.gpu, positions.gpu, H, KVH, freqs);
      p.expect_rounded_once({x}, "rope_forward");
      p.adopt_gpu_values(x);  // the GPU stored rope's output rounded to the dtype
      auto out = p.constant(dt, {B, T, H * D}, 0.0f), lse = p.constant(DType::f32, {B, H, T}, 0.0f);
      p.cpu.attention_forward(out.cpu, lse.cpu, x.cpu, positions.cpu, H, KVH, 0);
      p.gpu->attention_forward(out.gpu, lse.gpu, x.gpu, positions.gpu, H, KVH, 0);
      p.expect_close({out, lse}, "attention_forward");
      auto dout = p.random(dt, {B, T, H * D}), dqkv = p.constant(dt, {B, T, W}, 7.0f);
      p.cpu.attention_backward(dqkv.cpu, dout.cpu, x.cpu, out.cpu, lse.cpu, positions.cpu, H, KVH,
                               Tensor());
      p.gpu->attention_backward(dqkv.gpu, dout.gpu, x.gpu, out.gpu, lse.gpu, positions.gpu, H, KVH,
                                p.attention_workspace(x, positions, H, KVH));
      p.expect_close({dqkv}, "attention_backward");
      p.cpu.rope_backward(dqkv.cpu, positions.cpu, H, KVH, freqs);
      p.gpu->rope_backward(dqkv.gpu, positions.gpu, H, KVH, freqs);
      p.expect_close({dqkv}, "rope_backward");
    }
    // Decoding: 3 new queries at rows 30..32 of a 40-row cache.
    auto cache = p.random(dt, {B, 40, W});
    auto step_out = p.constant(dt, {B, 3, H * D}, 0.0f);
    auto step_lse = p.constant(DType::f32, {B, H, 3}, 0.0f);
    auto step_positions = p.positions(B, 3, 30);
    p.cpu.attention_forward(step_out.cpu, step_lse.cpu, cache.cpu, step_positions.cpu, H, KVH, 30);
    p.gpu->attention_forward(step_out.gpu, step_lse.gpu, cache.gpu, step_positions.gpu, H, KVH, 30);
    p.expect_close({step_out, step_lse}, "attention_forward (decoding)");
    // Activations.
    const int64_t N = 37, I = 75;
    auto x = p.random(dt, {N, I}, 2.0f), y = p.constant(dt, {N, I}, 0.0f);
    auto gate_up = p.random(dt, {N, 2 * I}, 2.0f), dgate_up = p.constant(dt, {N, 2 * I}, 0.0f);
    auto dy = p.random(dt, {N, I}), dx = p.constant(dt, {N, I}, 0.0f);
    p.cpu.gelu_forward(y.cpu, x.cpu);
    p.gpu->gelu_forward(y.gpu, x.gpu);
    p.cpu.gelu_backward(dx.cpu, x.cpu, dy.cpu);
    p.gpu->gelu_backward(dx.gpu, x.gpu, dy.gpu);
    p.expect_rounded_once({y, dx}, "gelu");
    p.cpu.swiglu_forward(y.cpu, gate_up.cpu);
    p.gpu->swiglu_forward(y.gpu, gate_up.gpu);
    p.cpu.swiglu_backward(dgate_up.cpu, gate_up.cpu, dy.cpu);
    p.gpu->swiglu_backward(dgate_up.gpu, gate_up.gpu, dy.gpu);
    p.expect_rounded_once({y, dgate_up}, "swiglu");
    p.cpu.add_inplace(y.cpu, x.cpu);
    p.gpu->add_inplace(y.gpu, x.gpu);
    p.expect_close({y}, "add_inplace");
  }
}

// The streaming kernels' tails: SwiGLU over a second column chunk (1100 columns: 1024 and
// 76) and GELU and the residual add over a last block of a few elements; rope over nine
// turning heads (a remainder past its unrolled four).
// SwiGLU forward and backward over (N, I) rows, each output one rounding of the CPU's.
void check_swiglu(Pair& p, DType dt, int64_t N, int64_t I, const char* what) {
  auto gate_up = p.random(dt, {N, 2 * I}, 2.0f), dgate_up = p.constant(dt, {N, 2 * I}, 0.0f);
  auto y = p.constant(dt, {N, I}, 0.0f), dy = p.random(dt, {N, I});
  p.cpu.swiglu_forward(y.cpu, gate_up.cpu);
  p.gpu->swiglu_forward(y.gpu, gate_up.gpu);
  p.cpu.swiglu_backward(dgate_up.cpu, gate_up.cpu, dy.cpu);
  p.gpu->swiglu_backward(dgate_up.gpu, gate_up.gpu, dy.gpu);
  p.expect_rounded_once({y, dgate_up}, what);
}

TEST_CASE("activations, residual adds and rope past their kernels' blocks") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t N = 3, I = 1100;
    check_swiglu(p, dt, N, I, "swiglu over two column chunks");
    auto y = p.constant(dt, {N, I}, 0.0f), dy = p.random(dt, {N, I});
    auto x = p.random(dt, {N, I}, 2.0f), dx = p.constant(dt, {N, I}, 0.0f);
    p.cpu.gelu_forward(y.cpu, x.cpu);
    p.gpu->gelu_forward(y.gpu, x.gpu);
    p.cpu.gelu_backward(dx.cpu, x.cpu, dy.cpu);
    p.gpu->gelu_backward(dx.gpu, x.gpu, dy.gpu);
    p.expect_rounded_once({y, dx}, "gelu over 3300 elements");
    auto residual = p.random(dt, {N, I});
    p.cpu.add_inplace(residual.cpu, x.cpu);
    p.gpu->add_inplace(residual.gpu, x.gpu);
    p.expect_rounded_once({residual}, "add_inplace over 3300 elements");
    const int64_t B = 2, T = 5, H = 6, KVH = 3, D = 8;
    auto qkv = p.random(dt, {B, T, (H + 2 * KVH) * D});
    const RopeFrequencies freqs = rope_frequencies(10000.0f, RopeScaling{}, static_cast<int>(D));
    auto positions = p.positions(B, T, 7);
    p.cpu.rope_forward(qkv.cpu, positions.cpu, H, KVH, freqs);
    p.gpu->rope_forward(qkv.gpu, positions.gpu, H, KVH, freqs);
    p.expect_rounded_once({qkv}, "rope over nine heads");
  }
}

// The streaming kernels move packs of 8 elements where every pointer is 16-byte aligned:
// lengths that leave a ragged last pack, views one element past an allocation's start
// (every pointer misaligned: element accesses), mixed dtypes, and SwiGLU rows that do and
// do not split into packs.
TEST_CASE("streaming kernels: packs, a ragged tail and views off 16-byte alignment") {
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t n = 4099;  // 512 packs and 3 elements
    auto x_all = p.random(dt, {n + 1}, 2.0f), dy_all = p.random(dt, {n + 1});
    auto y_all = p.constant(dt, {n + 1}, 0.0f), dx_all = p.constant(dt, {n + 1}, 0.0f);
    auto acc_all = p.random(dt, {n + 1}), wide_all = p.random(DType::f32, {n + 1});
    for (const int64_t offset : {int64_t{0}, int64_t{1}}) {
      CAPTURE(offset);
      auto view = [&](const Pair::Twin& t) {
        return Pair::Twin{t.cpu.view(offset, {n}), t.gpu.view(offset, {n})};
      };
      const Pair::Twin x = view(x_all), dy = view(dy_all), y = view(y_all), dx = view(dx_all);
      const Pair::Twin acc = view(acc_all), wide = view(wide_all);
      p.cpu.gelu_forward(y.cpu, x.cpu);
      p.gpu->gelu_forward(y.gpu, x.gpu);
      p.cpu.gelu_backward(dx.cpu, x.cpu, dy.cpu);
      p.gpu->gelu_backward(dx.gpu, x.gpu, dy.gpu);
      p.expect_rounded_once({y, dx}, "gelu over packs");
      p.cpu.add_inplace(acc.cpu, wide.cpu);  // an f32 addend into the dtype
      p.gpu->add_inplace(acc.gpu, wide.gpu);
      p.expect_rounded_once({acc}, "add_inplace of f32 over packs");
      p.adopt_gpu_values(acc_all);
      p.cpu.convert(wide.cpu, acc.cpu);
      p.gpu->convert(wide.gpu, acc.gpu);
      p.expect_close({wide}, "convert to f32 over packs");
    }
    for (const int64_t I : {int64_t{1024}, int64_t{1027}}) {  // packs along rows, or none
      CAPTURE(I);
      check_swiglu(p, dt, 3, I, "swiglu over packs");
    }
  }
}

struct AttentionCase {
  int64_t B, T, H, KVH, D;
};

// Training attention's tensors on both backends (qkv and positions given): forward, then
// backward into a dqkv of 7s, each checked against the CPU under `label`.
struct AttentionTwins {
  Pair::Twin out, lse, dout, dqkv;
};
AttentionTwins attention_against_cpu(Pair& p, DType dt, const AttentionCase& s,
                                     const Pair::Twin& qkv, const Pair::Twin& positions,
                                     const std::string& label) {
  const int64_t W = (s.H + 2 * s.KVH) * s.D;
  AttentionTwins a{p.constant(dt, {s.B, s.T, s.H * s.D}, 0.0f),
                   p.constant(DType::f32, {s.B, s.H, s.T}, 0.0f),
                   {},
                   {}};
  p.cpu.attention_forward(a.out.cpu, a.lse.cpu, qkv.cpu, positions.cpu, s.H, s.KVH, 0);
  p.gpu->attention_forward(a.out.gpu, a.lse.gpu, qkv.gpu, positions.gpu, s.H, s.KVH, 0);
  p.expect_close({a.out, a.lse}, (label + "attention_forward").c_str());
  a.dout = p.random(dt, {s.B, s.T, s.H * s.D});
  a.dqkv = p.constant(dt, {s.B, s.T, W}, 7.0f);
  p.cpu.attention_backward(a.dqkv.cpu, a.dout.cpu, qkv.cpu, a.out.cpu, a.lse.cpu, positions.cpu,
                           s.H, s.KVH, Tensor());
  p.gpu->attention_backward(a.dqkv.gpu, a.dout.gpu, qkv.gpu, a.out.gpu, a.lse.gpu, positions.gpu,
                            s.H, s.KVH, p.attention_workspace(qkv, positions, s.H, s.KVH));
  p.expect_close({a.dqkv}, (label + "attention_backward").c_str());
  return a;
}

// bf16/fp16 at these head sizes run on tensor cores (core/cuda/attention_tensor_cores.cu;
// the allocator's 512-byte granularity keeps every tensor 16-byte aligned), f32 on the
// f32-arithmetic kernels; the case above (head size 16) runs those in every dtype. Query
// counts leave a short last 64-row tile (and once fill it exactly), the decoding call
// starts mid-tile, and samples of 50 tokens packed into the rows cross tile edges.
TEST_CASE("tensor-core attention over several tiles at head sizes 32 to 128") {
  // Our kernels, not cuDNN's (the case below), which would take the one-sample rows.
  const ScopedEnvironment own_kernels("LLMFT_CUDNN_ATTENTION", "off");
  const AttentionCase shapes[] = {{2, 150, 4, 2, 64},
                                  {1, 70, 3, 1, 128},
                                  {1, 65, 2, 2, 32},
                                  {1, 40, 2, 1, 96},
                                  {1, 128, 4, 1, 128}};
  for (const AttentionCase& s : shapes) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(s.D);
      Pair p;
      const int64_t W = (s.H + 2 * s.KVH) * s.D;
      auto qkv = p.random(dt, {s.B, s.T, W});
      for (const int64_t sample : {int64_t{0}, int64_t{50}}) {
        CAPTURE(sample);
        attention_against_cpu(p, dt, s, qkv, p.positions(s.B, s.T, 0, sample), "");
      }
      const int64_t queries = 5, first = s.T - 10;
      auto step_out = p.constant(dt, {s.B, queries, s.H * s.D}, 0.0f);
      auto step_lse = p.constant(DType::f32, {s.B, s.H, queries}, 0.0f);
      auto step_positions = p.positions(s.B, queries, first);
      p.cpu.attention_forward(step_out.cpu, step_lse.cpu, qkv.cpu, step_positions.cpu, s.H, s.KVH,
                              first);
      p.gpu->attention_forward(step_out.gpu, step_lse.gpu, qkv.gpu, step_positions.gpu, s.H, s.KVH,
                               first);
      p.expect_close({step_out, step_lse}, "attention_forward (decoding)");
    }
  }
  // Decoding 70 queries from row 30 of a 100-row cache: two query tiles, mid-sequence.
  for (DType dt : kDtypes) {
    CAPTURE(std::string(dtype_name(dt)));
    Pair p;
    const int64_t B = 1, H = 4, KVH = 2, D = 64, queries = 70, first = 30;
    auto cache = p.random(dt, {B, first + queries, (H + 2 * KVH) * D});
    auto out = p.constant(dt, {B, queries, H * D}, 0.0f);
    auto lse = p.constant(DType::f32, {B, H, queries}, 0.0f);
    auto positions = p.positions(B, queries, first);
    p.cpu.attention_forward(out.cpu, lse.cpu, cache.cpu, positions.cpu, H, KVH, first);
    p.gpu->attention_forward(out.gpu, lse.gpu, cache.gpu, positions.gpu, H, KVH, first);
    p.expect_close({out, lse}, "attention_forward (decoding two tiles)");
  }
}

// A second CUDA backend with cuDNN attention turned off (our kernels), fed the values the
// Pair's GPU tensors hold.
struct OwnKernels {
  ScopedEnvironment off{"LLMFT_CUDNN_ATTENTION", "off"};
  std::unique_ptr<Backend> gpu = make_backend("cuda", NodePlacement{}, size_t{1} << 30);
  Allocator alloc{gpu->memory(), 0};
  std::vector<Buffer> buffers;

  Tensor copy_of(Pair& p, const Tensor& t) {
    buffers.push_back(alloc.allocate(t.bytes(), MemoryCategory::other, "t"));
    const Tensor mine = buffers.back().as(t.dtype, t.shape);
    std::vector<uint8_t> bytes(t.bytes());
    p.gpu->copy_to_host(bytes.data(), t);
    gpu->copy_to_device(mine, bytes.data());
    return mine;
  }
  std::vector<float> read(const Tensor& t) {
    std::vector<uint8_t> bytes(t.bytes());
    gpu->copy_to_host(bytes.data(), t);
    return from_dtype_bytes(bytes, t.dtype);
  }
};

// cuDNN's SDPA (core/cuda/cudnn_attention.h), which the backend runs for bf16/fp16 training
// attention with one sample per row, against the CPU within the 16-bit bounds above: like
// our tensor-core kernels it rounds the probabilities and dS to the dtype before their
// products, and each output once. That cuDNN ran and not our kernels: our kernels
// (deterministic) compute other bits from the same values. Grouped queries (H / KVH of 2
// and 4) and none, head sizes 32 to 128, rows past one tile, and positions of a continuous
// stream from 5 (one sample per row). A build without cuDNN has nothing to check here.
TEST_CASE("cuDNN attention (causal, grouped queries) against the CPU") {
  const AttentionCase shapes[] = {{2, 150, 4, 2, 64}, {1, 200, 8, 2, 128}, {2, 70, 6, 6, 32}};
  for (const AttentionCase& s : shapes) {
    for (DType dt : {DType::bf16, DType::f16}) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(s.D);
      Pair p;
      const std::string described = p.gpu->describe();
      CHECK_MESSAGE(described.find("cuDNN could not start") == std::string::npos, described);
      if (described.find("cuDNN attention") == std::string::npos) {
        MESSAGE("no cuDNN attention here (" << described << "): nothing to check");
        return;
      }
      const int64_t W = (s.H + 2 * s.KVH) * s.D;
      auto qkv = p.random(dt, {s.B, s.T, W});
      auto positions = p.positions(s.B, s.T, 5);
      const AttentionTwins a = attention_against_cpu(p, dt, s, qkv, positions, "cuDNN ");
      const Pair::Twin &out = a.out, &lse = a.lse, &dout = a.dout, &dqkv = a.dqkv;

      OwnKernels own;
      const Tensor own_out = own.copy_of(p, out.gpu), own_lse = own.copy_of(p, lse.gpu);
      const Tensor own_qkv = own.copy_of(p, qkv.gpu), own_positions = own.copy_of(p, positions.gpu);
      own.gpu->attention_forward(own_out, own_lse, own_qkv, own_positions, s.H, s.KVH, 0);
      CHECK(own.read(own_out) != p.read_gpu(out.gpu));
      const Tensor own_dqkv = own.copy_of(p, dqkv.gpu), own_dout = own.copy_of(p, dout.gpu);
      own.gpu->attention_backward(own_dqkv, own_dout, own_qkv, own.copy_of(p, out.gpu),
                                  own.copy_of(p, lse.gpu), own_positions, s.H, s.KVH, Tensor());
      CHECK(own.read(own_dqkv) != p.read_gpu(dqkv.gpu));
    }
  }
}

TEST_CASE("cross-entropy over a padded vocabulary slice with masked targets") {
  struct Vocabulary {
    int64_t N, V, valid, start;
  };
  // Rows 50..100 of 101, padded to 53; and 5003 entries of 10000 from 4000, padded to 5005,
  // rows starting off 16-byte boundaries, each thread walking several packs of a row.
  for (const Vocabulary v : {Vocabulary{37, 53, 51, 50}, Vocabulary{9, 5005, 5003, 4000}}) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(v.V);
      Pair p;
      const int64_t N = v.N, V = v.V, valid = v.valid, start = v.start;
      std::vector<float> targets(N);
      for (int64_t n = 0; n < N; ++n)
        targets[n] = n % 5 == 0 ? -1.0f : static_cast<float>(start - 50 + n * 3 % 101);
      auto ids = p.make(DType::i32, {N}, targets);
      auto logits = p.random(dt, {N, V}, 3.0f);
      auto stats = p.constant(DType::f32, {3, N}, 0.0f), loss = p.constant(DType::f32, {1}, 0.0f);
      p.cpu.cross_entropy_max(stats.cpu, logits.cpu, valid);
      p.gpu->cross_entropy_max(stats.gpu, logits.gpu, valid);
      p.cpu.cross_entropy_sums(stats.cpu, logits.cpu, ids.cpu, start, valid);
      p.gpu->cross_entropy_sums(stats.gpu, logits.gpu, ids.gpu, start, valid);
      p.expect_close({stats}, "cross_entropy statistics");
      p.cpu.cross_entropy_finish(logits.cpu, loss.cpu, stats.cpu, ids.cpu, start, valid, 0.25f);
      p.gpu->cross_entropy_finish(logits.gpu, loss.gpu, stats.gpu, ids.gpu, start, valid, 0.25f);
      p.expect_close({logits, loss}, "cross_entropy_finish");
    }
  }
}

// 150 x 17 takes AdaLomo's column sums over more than one lap of their 64 row slots.
TEST_CASE("optimizer arithmetic: sums of squares, AdamW, SGD, AdaLomo") {
  struct Shape {
    int64_t R, C;
  };
  // 1100 rows: AdaLomo's column sums load 8 row laps ahead (column_sums.cuh).
  for (const Shape shape : {Shape{37, 75}, Shape{150, 17}, Shape{1100, 17}}) {
    for (DType dt : kDtypes) {
      CAPTURE(std::string(dtype_name(dt)));
      CAPTURE(shape.R);
      Pair p;
      const int64_t R = shape.R, C = shape.C;
      auto g = p.random(dt, {R, C}, 0.1f), param = p.random(dt, {R, C}, 0.2f);
      auto sum = p.constant(DType::f32, {1}, 1.0f);
      p.cpu.sum_squares(sum.cpu, g.cpu);
      p.gpu->sum_squares(sum.gpu, g.gpu);
      p.expect_close({sum}, "sum_squares");
      // More elements than the 1024 blocks of 256 threads take in one lap, and a tail.
      auto many = p.random(dt, {300001}, 0.1f);
      auto many_sum = p.constant(DType::f32, {1}, 0.0f);
      p.cpu.sum_squares(many_sum.cpu, many.cpu);
      p.gpu->sum_squares(many_sum.gpu, many.gpu);
      p.expect_close({many_sum}, "sum_squares over 300001 elements");
      auto master = p.random(DType::f32, {R, C}), m = p.random(DType::f32, {R, C}, 0.01f);
      auto v = p.constant(DType::f32, {R, C}, 1e-4f);
      for (int step = 1; step <= 3; ++step) {
        p.cpu.adamw_update(master.cpu, g.cpu, m.cpu, v.cpu, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f,
                           0.1f * step, 0.05f * step);
        p.gpu->adamw_update(master.gpu, g.gpu, m.gpu, v.gpu, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f,
                            0.1f * step, 0.05f * step);
      }
      p.expect_close({master, m, v}, "adamw_update");
      auto momentum = p.constant(DType::f32, {R, C}, 0.0f);
      p.cpu.sgd_update(param.cpu, g.cpu, momentum.cpu, 0.1f, 0.9f, 0.01f, 2.0f);
      p.gpu->sgd_update(param.gpu, g.gpu, momentum.gpu, 0.1f, 0.9f, 0.01f, 2.0f);
      p.expect_close({param, momentum}, "sgd_update");
      p.adopt_gpu_values(param);  // the GPU stored the update rounded; AdaLomo reads it next
      auto row_sums = p.constant(DType::f32, {R}, 0.0f),
           col_sums = p.constant(DType::f32, {C}, 0.0f);
      auto row = p.constant(DType::f32, {R}, 0.0f), col = p.constant(DType::f32, {C}, 0.0f);
      auto stats = p.constant(DType::f32, {3}, 0.0f);
      p.cpu.adalomo_square_sums(row_sums.cpu, col_sums.cpu, g.cpu, 0.5f);
      p.gpu->adalomo_square_sums(row_sums.gpu, col_sums.gpu, g.gpu, 0.5f);
      p.cpu.adalomo_moments(row.cpu, col.cpu, stats.cpu, row_sums.cpu, col_sums.cpu, R, C, 0.3f);
      p.gpu->adalomo_moments(row.gpu, col.gpu, stats.gpu, row_sums.gpu, col_sums.gpu, R, C, 0.3f);
      p.cpu.adalomo_norms(stats.cpu, param.cpu, g.cpu, row.cpu, col.cpu, R, 0.5f);
      p.gpu->adalomo_norms(stats.gpu, param.gpu, g.gpu, row.gpu, col.gpu, R, 0.5f);
      // Each statistic on its own: they differ by orders of magnitude.
      const auto statistic = [&](int64_t i) {
        return Pair::Twin{stats.cpu.view(i, {1}), stats.gpu.view(i, {1})};
      };
      p.expect_close({row_sums, col_sums, row, col, statistic(0), statistic(1), statistic(2)},
                     "adalomo statistics");
      p.cpu.adalomo_apply(param.cpu, g.cpu, row.cpu, col.cpu, stats.cpu, R, R * C, 0.05f, 0.01f,
                          0.5f);
      p.gpu->adalomo_apply(param.gpu, g.gpu, row.gpu, col.gpu, stats.gpu, R, R * C, 0.05f, 0.01f,
                           0.5f);
      p.expect_close({param}, "adalomo_apply");
    }
  }
}

TEST_CASE("fill and convert between every pair of float dtypes round as the host does") {
  const int64_t n = 1001;
  for (DType to : kDtypes) {
    CAPTURE(std::string(dtype_name(to)));
    Pair p;
    auto y = p.constant(to, {n}, 0.0f);
    for (DType from : kDtypes) {
      CAPTURE(std::string(dtype_name(from)));
      auto x = p.random(from, {n});  // the CPU side: x's values, exact in f32
      p.gpu->convert(y.gpu, x.gpu);
      const std::vector<float> source = p.read_cpu(x.cpu);
      CHECK(p.read_gpu(y.gpu) == from_dtype_bytes(to_dtype_bytes(source.data(), n, to), to));
    }
    // 0.3 through the fill kernel; +0 through the driver's memset; -0 through the kernel.
    for (float fill_value : {0.3f, 0.0f, -0.0f}) {
      CAPTURE(fill_value);
      p.gpu->fill(y.gpu, fill_value);
      const std::vector<float> value(static_cast<size_t>(n), fill_value);
      const std::vector<uint8_t> expected = to_dtype_bytes(value.data(), n, to);
      const std::vector<uint8_t> got = to_dtype_bytes(p.read_gpu(y.gpu).data(), n, to);
      CHECK(got == expected);  // bytes, so that -0 and +0 differ
    }
  }
}

}  // namespace
}  // namespace llmft
