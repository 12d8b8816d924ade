#include "core/llama/llama_family.h"

#include "core/decoder/attention_sublayer.h"
#include "core/decoder/parallel_linear.h"

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
  AttentionSaved attention;
  NormSaved n2;
  Buffer gate_up;
};

constexpr AttentionSpec kAttention{NormKind::rmsnorm, true, "input_layernorm"};

AttentionWeights attention_weights(const Weights& w) {
  return {w.input_norm, Tensor(), w.qkv, Tensor(), w.o, Tensor()};
}

}  // namespace

UnitLayout LlamaFamily::embedding_layout(const ModelConfig& c, TpSlice tp,
                                         int64_t vocab_row_multiple) const {
  UnitLayout u;
  u.name = "embedding";
  u.add(vocab_split(matrix("model.embed_tokens.weight", {c.vocab_size, c.hidden}), tp,
                    vocab_row_multiple));
  return u;
}

UnitLayout LlamaFamily::head_layout(const ModelConfig& c, TpSlice tp,
                                    int64_t vocab_row_multiple) const {
  UnitLayout u;
  u.name = "head";
  u.add(norm_weight("model.norm.weight", c.hidden));
  if (!c.tie_embeddings) {
    u.add(vocab_split(matrix("lm_head.weight", {c.vocab_size, c.hidden}), tp, vocab_row_multiple));
  }
  return u;
}

UnitLayout LlamaFamily::block_layout(const ModelConfig& c, int layer, TpSlice tp) const {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  const int64_t C = c.hidden, I = c.intermediate, D = c.head_dim();
  constexpr TpSplit rows = TpSplit::rows, columns = TpSplit::columns;
  UnitLayout u;
  u.name = "block." + std::to_string(layer);
  u.add(norm_weight(p + "input_layernorm.weight", C));
  u.add(tp_split(matrix(p + "self_attn.q_proj.weight", {c.n_head * D, C}), rows, tp));
  u.add(tp_split(matrix(p + "self_attn.k_proj.weight", {c.n_kv_head * D, C}), rows, tp));
  u.add(tp_split(matrix(p + "self_attn.v_proj.weight", {c.n_kv_head * D, C}), rows, tp));
  u.add(tp_split(matrix(p + "self_attn.o_proj.weight", {C, c.n_head * D}), columns, tp));
  u.add(norm_weight(p + "post_attention_layernorm.weight", C));
  u.add(tp_split(matrix(p + "mlp.gate_proj.weight", {I, C}), rows, tp));
  u.add(tp_split(matrix(p + "mlp.up_proj.weight", {I, C}), rows, tp));
  u.add(tp_split(matrix(p + "mlp.down_proj.weight", {C, I}), columns, tp));
  return u;
}

void LlamaFamily::block_forward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                                Tensor x, BlockSaved& saved) const {
  const Weights w = bind(layout, params);
  const int64_t N = ctx.shape.rows(), C = ctx.config.hidden, I = w.down.dim(1);
  auto in = std::make_unique<Internals>();
  Tensor res2 = attention_sublayer_forward(ctx, kAttention, attention_weights(w), x, in->attention);

  Tensor n2 = residual_norm_forward(ctx, NormKind::rmsnorm, w.post_norm, Tensor(), res2, x, in->n2,
                                    "post_attention_layernorm");
  Tensor gate_up = ctx.take(in->gate_up, {N, 2 * I}, MemoryCategory::activations, "mlp gate/up");
  {
    Buffer rows_buf;
    ctx.be.linear_forward(gate_up, ctx.gather_rows(rows_buf, n2, "mlp input"), w.gate_up, Tensor());
  }
  Buffer hidden_buf;
  Tensor hidden = ctx.take(hidden_buf, {N, I}, MemoryCategory::workspace, "swiglu output");
  ctx.be.swiglu_forward(hidden, gate_up);

  Tensor out =
      ctx.take(saved.out, {ctx.stream_rows(), C}, MemoryCategory::activations, "block output");
  row_parallel_forward(ctx, out, hidden, w.down, Tensor());
  ctx.be.add_inplace(out, res2);
  saved.internals = std::move(in);
}

void LlamaFamily::block_backward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                                 Tensor grads, Tensor x, const BlockSaved& saved,
                                 Tensor stream) const {
  const Weights w = bind(layout, params), g = bind(layout, grads);
  const int64_t N = ctx.shape.rows(), L = ctx.stream_rows(), C = ctx.config.hidden;
  const int64_t I = w.down.dim(1);
  const auto& in = static_cast<const Internals&>(*saved.internals);
  const auto ws = MemoryCategory::workspace;
  Buffer hidden_buf, wide_buf, narrow_buf;
  Tensor hidden = ctx.take(hidden_buf, {N, I}, ws, "block backward (mlp)");
  Tensor wide =
      ctx.take(wide_buf, {N * std::max(2 * I, w.qkv.dim(0))}, ws, "block backward (wide)");
  Tensor narrow = ctx.take(narrow_buf, {N, C}, ws, "block backward (narrow)");

  // MLP; stream = d out.
  Tensor gate_up = ctx.view(in.gate_up, {N, 2 * I});
  ctx.be.swiglu_forward(hidden, gate_up);
  Tensor dhidden = hidden;  // silu(g) * u is no longer needed after the weight gradient
  {
    Buffer rows_buf;
    const Tensor dout = ctx.gather_rows(rows_buf, stream, "mlp output gradient");
    ctx.be.linear_backward(Tensor(), false, g.down, Tensor(), dout, hidden, w.down);
    ctx.be.linear_backward(dhidden, false, Tensor(), Tensor(), dout, hidden, w.down);
  }
  Tensor dgate_up = wide.view(0, {N, 2 * I});
  ctx.be.swiglu_backward(dgate_up, gate_up, dhidden);
  Tensor dn2 = narrow.view(0, {L, C});
  {
    Buffer rows_buf;
    column_parallel_backward(
        ctx, dn2, g.gate_up, Tensor(), dgate_up,
        ctx.gather_rows(rows_buf, ctx.view(in.n2.out, {L, C}), "mlp input (backward)"), w.gate_up);
  }
  // stream becomes d res2 = d out + post-attention RMSNorm backward.
  norm_backward(ctx, NormKind::rmsnorm, stream, g.post_norm, Tensor(), dn2,
                ctx.view(in.attention.res, {L, C}), w.post_norm, in.n2);
  attention_sublayer_backward(ctx, kAttention, attention_weights(w), attention_weights(g), x,
                              in.attention, stream, narrow, wide);
}

}  // namespace llmft
