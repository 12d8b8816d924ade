#include "core/llama/llama_family.h"

#include <algorithm>
#include <string>

namespace llmft {

namespace {

constexpr float kInitStd = 0.02f;

ParamInfo matrix(const std::string& name, Shape shape) {
  ParamInfo p;
  p.name = name;
  p.shape = std::move(shape);
  p.weight_decay = true;
  p.init_std = kInitStd;
  return p;
}

ParamInfo norm_weight(const std::string& name, int64_t C) {
  ParamInfo p;
  p.name = name;
  p.shape = {C};
  p.init_value = 1.0f;
  return p;
}

enum Param { kInputNorm, kQ, kK, kV, kO, kPostNorm, kGate, kUp, kDown };

struct Weights {
  Tensor input_norm, qkv, o, post_norm, gate_up, down;
};

Weights bind(const UnitLayout& u, const Tensor& flat) {
  const int64_t qkv_rows = u.params[kQ].shape[0] + u.params[kK].shape[0] + u.params[kV].shape[0];
  const int64_t C = u.params[kQ].shape[1];
  Weights w;
  w.input_norm = u.slice(flat, kInputNorm);
  w.qkv = flat.view(u.params[kQ].offset, {qkv_rows, C});
  w.o = u.slice(flat, kO);
  w.post_norm = u.slice(flat, kPostNorm);
  w.gate_up = flat.view(u.params[kGate].offset, {2 * u.params[kGate].shape[0], C});
  w.down = u.slice(flat, kDown);
  return w;
}

struct Internals : BlockInternals {
  NormSaved n1, n2;
  Buffer qkv, att, lse, res2, gate_up;
};

}  // namespace

UnitLayout LlamaFamily::embedding_layout(const ModelConfig& c) const {
  UnitLayout u;
  u.name = "embedding";
  u.add(matrix("model.embed_tokens.weight", {c.vocab_size, c.hidden}));
  return u;
}

UnitLayout LlamaFamily::head_layout(const ModelConfig& c) const {
  UnitLayout u;
  u.name = "head";
  u.add(norm_weight("model.norm.weight", c.hidden));
  if (!c.tie_embeddings) u.add(matrix("lm_head.weight", {c.vocab_size, c.hidden}));
  return u;
}

UnitLayout LlamaFamily::block_layout(const ModelConfig& c, int layer) const {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  const int64_t C = c.hidden, I = c.intermediate, D = c.head_dim();
  UnitLayout u;
  u.name = "block." + std::to_string(layer);
  u.add(norm_weight(p + "input_layernorm.weight", C));
  u.add(matrix(p + "self_attn.q_proj.weight", {c.n_head * D, C}));
  u.add(matrix(p + "self_attn.k_proj.weight", {c.n_kv_head * D, C}));
  u.add(matrix(p + "self_attn.v_proj.weight", {c.n_kv_head * D, C}));
  u.add(matrix(p + "self_attn.o_proj.weight", {C, c.n_head * D}));
  u.add(norm_weight(p + "post_attention_layernorm.weight", C));
  u.add(matrix(p + "mlp.gate_proj.weight", {I, C}));
  u.add(matrix(p + "mlp.up_proj.weight", {I, C}));
  u.add(matrix(p + "mlp.down_proj.weight", {C, I}));
  return u;
}

void LlamaFamily::block_forward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                                Tensor x, BlockSaved& saved) const {
  const ModelConfig& c = ctx.config;
  const BlockShape s = ctx.shape;
  const int64_t N = s.rows(), C = c.hidden, I = c.intermediate;
  const Weights w = bind(layout, params);
  const int64_t W = w.qkv.dim(0);
  const auto act = MemoryCategory::activations;
  auto in = std::make_unique<Internals>();

  Tensor n1 =
      norm_forward(ctx, NormKind::rmsnorm, w.input_norm, Tensor(), x, in->n1, "input_layernorm");
  Tensor qkv = ctx.take(in->qkv, {s.batch, s.seq_len, W}, act, "qkv");
  ctx.be.linear_forward(qkv.reshaped({N, W}), n1, w.qkv, Tensor());
  ctx.be.rope_forward(qkv, c.n_head, c.n_kv_head, c.rope_theta, ctx.position_offset);
  Tensor att = ctx.take(in->att, {N, C}, act, "attention output");
  Tensor lse = ctx.take(in->lse, {s.batch, c.n_head, s.seq_len}, act, "attention lse");
  ctx.be.attention_forward(att, lse, ctx.attention_input(qkv), c.n_head, c.n_kv_head,
                           ctx.first_query());

  Tensor res2 = ctx.take(in->res2, {N, C}, act, "attention residual");
  ctx.be.linear_forward(res2, att, w.o, Tensor());
  ctx.be.add_inplace(res2, x);

  Tensor n2 = norm_forward(ctx, NormKind::rmsnorm, w.post_norm, Tensor(), res2, in->n2,
                           "post_attention_layernorm");
  Tensor gate_up = ctx.take(in->gate_up, {N, 2 * I}, act, "mlp gate/up");
  ctx.be.linear_forward(gate_up, n2, w.gate_up, Tensor());
  Buffer hidden_buf;
  Tensor hidden = ctx.take(hidden_buf, {N, I}, MemoryCategory::workspace, "swiglu output");
  ctx.be.swiglu_forward(hidden, gate_up);

  Tensor out = ctx.take(saved.out, {N, C}, act, "block output");
  ctx.be.linear_forward(out, hidden, w.down, Tensor());
  ctx.be.add_inplace(out, res2);
  saved.internals = std::move(in);
}

void LlamaFamily::block_backward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                                 Tensor grads, Tensor x, const BlockSaved& saved,
                                 Tensor stream) const {
  const ModelConfig& c = ctx.config;
  const BlockShape s = ctx.shape;
  const int64_t N = s.rows(), C = c.hidden, I = c.intermediate;
  const Weights w = bind(layout, params), g = bind(layout, grads);
  const int64_t W = w.qkv.dim(0);
  const auto& in = static_cast<const Internals&>(*saved.internals);
  const auto ws = MemoryCategory::workspace;
  Buffer hidden_buf, wide_buf, narrow_buf;
  Tensor hidden = ctx.take(hidden_buf, {N, I}, ws, "block backward (mlp)");
  Tensor wide = ctx.take(wide_buf, {N * std::max(2 * I, W)}, ws, "block backward (wide)");
  Tensor narrow = ctx.take(narrow_buf, {N, C}, ws, "block backward (narrow)");

  // MLP; stream = d out.
  Tensor gate_up = f32_view(in.gate_up, {N, 2 * I});
  ctx.be.swiglu_forward(hidden, gate_up);
  ctx.be.linear_backward(Tensor(), false, g.down, Tensor(), stream, hidden, w.down);
  Tensor dhidden = hidden;  // silu(g) * u is no longer needed: reuse its memory
  ctx.be.linear_backward(dhidden, false, Tensor(), Tensor(), stream, hidden, w.down);
  Tensor dgate_up = wide.view(0, {N, 2 * I});
  ctx.be.swiglu_backward(dgate_up, gate_up, dhidden);
  ctx.be.linear_backward(narrow, false, g.gate_up, Tensor(), dgate_up, f32_view(in.n2.out, {N, C}),
                         w.gate_up);
  // stream becomes d res2 = d out + post-attention RMSNorm backward.
  norm_backward(ctx, NormKind::rmsnorm, stream, g.post_norm, Tensor(), narrow,
                f32_view(in.res2, {N, C}), w.post_norm, in.n2);

  // Attention.
  Tensor att = f32_view(in.att, {N, C});
  ctx.be.linear_backward(narrow, false, g.o, Tensor(), stream, att, w.o);
  Tensor dqkv = wide.view(0, {s.batch, s.seq_len, W});
  ctx.be.attention_backward(dqkv, narrow, f32_view(in.qkv, {s.batch, s.seq_len, W}), att,
                            f32_view(in.lse, {s.batch, c.n_head, s.seq_len}), c.n_head,
                            c.n_kv_head);
  ctx.be.rope_backward(dqkv, c.n_head, c.n_kv_head, c.rope_theta, ctx.position_offset);
  ctx.be.linear_backward(narrow, false, g.qkv, Tensor(), dqkv.reshaped({N, W}),
                         f32_view(in.n1.out, {N, C}), w.qkv);
  // stream becomes d x = d res2 + input RMSNorm backward.
  norm_backward(ctx, NormKind::rmsnorm, stream, g.input_norm, Tensor(), narrow, x, w.input_norm,
                in.n1);
}

}  // namespace llmft
