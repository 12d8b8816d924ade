#include "core/decoder/attention_sublayer.h"

#include "core/decoder/parallel_linear.h"
#include "core/rope_frequencies.h"

namespace llmft {

namespace {

// The workspace the backend's attention backward asks for this call (cuDNN's on GPUs),
// taken from the allocator so that the memory model counts it; undefined when none.
Tensor attention_workspace(const BlockContext& ctx, const Tensor& qkv, Buffer& buffer) {
  const size_t bytes =
      ctx.be.attention_backward_workspace(qkv, ctx.positions, ctx.heads(), ctx.kv_heads());
  if (bytes == 0) return Tensor();
  buffer = ctx.alloc.allocate(bytes, MemoryCategory::workspace, "attention workspace");
  return buffer.as(DType::f32, {static_cast<int64_t>(bytes / sizeof(float))});
}

}  // namespace

Tensor attention_sublayer_forward(const BlockContext& ctx, const AttentionSpec& spec,
                                  const AttentionWeights& w, Tensor x, AttentionSaved& saved) {
  const ModelConfig& c = ctx.config;
  const BlockShape s = ctx.shape;
  const int64_t N = s.rows(), A = ctx.heads() * c.head_dim(), W = ctx.qkv_width();
  const auto act = MemoryCategory::activations;
  Tensor normed = norm_forward(ctx, spec.norm, w.norm_w, w.norm_b, x, saved.norm, spec.norm_name);
  Tensor qkv = ctx.take(saved.qkv, {s.batch, s.seq_len, W}, act, "qkv");
  {
    Buffer rows_buf;
    ctx.be.linear_forward(qkv.reshaped({N, W}), ctx.gather_rows(rows_buf, normed, "qkv input"),
                          w.qkv_w, w.qkv_b);
  }
  if (spec.rotary) {
    ctx.be.rope_forward(qkv, ctx.positions, ctx.heads(), ctx.kv_heads(), rope_frequencies(c));
  }
  Tensor att = ctx.take(saved.att, {N, A}, act, "attention output");
  Tensor lse = ctx.take_f32(saved.lse, {s.batch, ctx.heads(), s.seq_len}, act, "attention lse");
  ctx.be.attention_forward(att, lse, ctx.attention_input(qkv), ctx.positions, ctx.heads(),
                           ctx.kv_heads(), ctx.first_query());
  Tensor res = ctx.take(saved.res, {ctx.stream_rows(), c.hidden}, act, "attention residual");
  row_parallel_forward(ctx, res, att, w.proj_w, w.proj_b);
  return res;
}

void attention_sublayer_backward(const BlockContext& ctx, const AttentionSpec& spec,
                                 const AttentionWeights& w, const AttentionWeights& g, Tensor x,
                                 const AttentionSaved& saved, Tensor stream, Tensor narrow,
                                 Tensor wide) {
  const ModelConfig& c = ctx.config;
  const BlockShape s = ctx.shape;
  const int64_t N = s.rows(), C = c.hidden, A = ctx.heads() * c.head_dim(), W = ctx.qkv_width();
  const int64_t L = ctx.stream_rows();
  Tensor att = ctx.view(saved.att, {N, A});
  Tensor datt = narrow.view(0, {N, A});
  {
    Buffer rows_buf;
    ctx.be.linear_backward(datt, false, g.proj_w, g.proj_b,
                           ctx.gather_rows(rows_buf, stream, "attention output gradient"), att,
                           w.proj_w);
  }
  Tensor dqkv = wide.view(0, {s.batch, s.seq_len, W});
  {
    const Tensor qkv = ctx.view(saved.qkv, {s.batch, s.seq_len, W});
    Buffer workspace_buf;
    const Tensor workspace = attention_workspace(ctx, qkv, workspace_buf);
    ctx.be.attention_backward(dqkv, datt, qkv, att,
                              saved.lse.as(DType::f32, {s.batch, ctx.heads(), s.seq_len}),
                              ctx.positions, ctx.heads(), ctx.kv_heads(), workspace);
  }
  if (spec.rotary) {
    ctx.be.rope_backward(dqkv, ctx.positions, ctx.heads(), ctx.kv_heads(), rope_frequencies(c));
  }
  Tensor dnormed = narrow.view(0, {L, C});
  {
    Buffer rows_buf;
    column_parallel_backward(
        ctx, dnormed, g.qkv_w, g.qkv_b, dqkv.reshaped({N, W}),
        ctx.gather_rows(rows_buf, ctx.view(saved.norm.out, {L, C}), "qkv input (backward)"),
        w.qkv_w);
  }
  // stream becomes d x = d res + the norm's backward.
  norm_backward(ctx, spec.norm, stream, g.norm_w, g.norm_b, dnormed, x, w.norm_w, saved.norm);
}

}  // namespace llmft
