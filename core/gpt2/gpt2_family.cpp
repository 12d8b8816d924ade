#include "core/gpt2/gpt2_family.h"

#include "core/decoder/attention_sublayer.h"
#include "core/decoder/parallel_linear.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace llmft {

namespace {

constexpr float kInitStd = 0.02f;

ParamInfo param(const std::string& name, Shape shape, bool matrix, float std, float value = 0.0f) {
  ParamInfo p;
  p.name = name;
  p.shape = std::move(shape);
  p.weight_decay = matrix;
  p.hf_transposed = matrix;  // GPT-2 stores its linear weights as Conv1D (in, out)
  p.init_std = std;
  p.init_value = value;
  return p;
}

struct Weights {
  Tensor ln1_w, ln1_b, qkv_w, qkv_b, attn_proj_w, attn_proj_b;
  Tensor ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b;
};

// Views of a block's parameters (or gradients) in its flat unit buffer.
Weights bind(const UnitLayout& u, const Tensor& flat) {
  Weights w;
  Tensor* fields[] = {&w.ln1_w, &w.ln1_b, &w.qkv_w, &w.qkv_b, &w.attn_proj_w, &w.attn_proj_b,
                      &w.ln2_w, &w.ln2_b, &w.fc_w,  &w.fc_b,  &w.mlp_proj_w,  &w.mlp_proj_b};
  for (int i = 0; i < 12; ++i) *fields[i] = u.slice(flat, i);
  return w;
}

struct Internals : BlockInternals {
  AttentionSaved attention;
  NormSaved ln2;
  Buffer fc;
};

constexpr AttentionSpec kAttention{NormKind::layernorm, false, "ln_1"};

AttentionWeights attention_weights(const Weights& w) {
  return {w.ln1_w, w.ln1_b, w.qkv_w, w.qkv_b, w.attn_proj_w, w.attn_proj_b};
}

}  // namespace

UnitLayout Gpt2Family::embedding_layout(const ModelConfig& c, TpSlice tp,
                                        int64_t vocab_row_multiple) const {
  UnitLayout u;
  u.name = "embedding";
  ParamInfo wte = param("transformer.wte.weight", {c.vocab_size, c.hidden}, true, kInitStd);
  wte.hf_transposed = false;
  u.add(vocab_split(wte, tp, vocab_row_multiple));
  ParamInfo wpe = param("transformer.wpe.weight", {c.max_seq_len, c.hidden}, true, 0.01f);
  wpe.hf_transposed = false;
  u.add(wpe);
  return u;
}

UnitLayout Gpt2Family::head_layout(const ModelConfig& c, TpSlice, int64_t) const {
  UnitLayout u;
  u.name = "head";
  u.add(param("transformer.ln_f.weight", {c.hidden}, false, 0.0f, 1.0f));
  u.add(param("transformer.ln_f.bias", {c.hidden}, false, 0.0f));
  return u;
}

UnitLayout Gpt2Family::block_layout(const ModelConfig& c, int layer, TpSlice tp) const {
  const std::string p = "transformer.h." + std::to_string(layer) + ".";
  const int64_t C = c.hidden, I = c.intermediate;
  const int64_t qkv = C + 2 * static_cast<int64_t>(c.n_kv_head) * c.head_dim();
  // Residual projections are scaled by 1/sqrt(2 L), as in GPT-2.
  const float proj_std = kInitStd / std::sqrt(2.0f * c.n_layer);
  constexpr TpSplit rows = TpSplit::rows, columns = TpSplit::columns;
  UnitLayout u;
  u.name = "block." + std::to_string(layer);
  u.add(param(p + "ln_1.weight", {C}, false, 0.0f, 1.0f));
  u.add(param(p + "ln_1.bias", {C}, false, 0.0f));
  // c_attn stacks q, k and v: each is split by heads.
  u.add(tp_split(param(p + "attn.c_attn.weight", {qkv, C}, true, kInitStd), rows, tp, 3));
  u.add(tp_split(param(p + "attn.c_attn.bias", {qkv}, false, 0.0f), rows, tp, 3));
  u.add(tp_split(param(p + "attn.c_proj.weight", {C, C}, true, proj_std), columns, tp));
  u.add(param(p + "attn.c_proj.bias", {C}, false, 0.0f));
  u.add(param(p + "ln_2.weight", {C}, false, 0.0f, 1.0f));
  u.add(param(p + "ln_2.bias", {C}, false, 0.0f));
  u.add(tp_split(param(p + "mlp.c_fc.weight", {I, C}, true, kInitStd), rows, tp));
  u.add(tp_split(param(p + "mlp.c_fc.bias", {I}, false, 0.0f), rows, tp));
  u.add(tp_split(param(p + "mlp.c_proj.weight", {C, I}, true, proj_std), columns, tp));
  u.add(param(p + "mlp.c_proj.bias", {C}, false, 0.0f));
  return u;
}

void Gpt2Family::block_forward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                               Tensor x, BlockSaved& saved) const {
  const Weights w = bind(layout, params);
  const int64_t N = ctx.shape.rows(), C = ctx.config.hidden, I = w.fc_w.dim(0);
  auto in = std::make_unique<Internals>();
  Tensor res2 = attention_sublayer_forward(ctx, kAttention, attention_weights(w), x, in->attention);

  Tensor ln2 =
      residual_norm_forward(ctx, NormKind::layernorm, w.ln2_w, w.ln2_b, res2, x, in->ln2, "ln_2");
  Tensor fc = ctx.take(in->fc, {N, I}, MemoryCategory::activations, "mlp c_fc output");
  Buffer gelu_buf;
  Tensor gelu;
  {
    Buffer rows_buf;
    const Tensor mlp_input = ctx.gather_rows(rows_buf, ln2, "mlp input");
    gelu = ctx.take(gelu_buf, {N, I}, MemoryCategory::workspace, "gelu output");
    ctx.be.linear_gelu_forward(gelu, fc, mlp_input, w.fc_w, w.fc_b);
  }

  Tensor out =
      ctx.take(saved.out, {ctx.stream_rows(), C}, MemoryCategory::activations, "block output");
  row_parallel_forward(ctx, out, gelu, w.mlp_proj_w, w.mlp_proj_b);
  ctx.be.add_inplace(out, res2);
  saved.internals = std::move(in);
}

void Gpt2Family::block_backward(const BlockContext& ctx, const UnitLayout& layout, Tensor params,
                                Tensor grads, Tensor x, const BlockSaved& saved,
                                Tensor stream) const {
  const Weights w = bind(layout, params), g = bind(layout, grads);
  const int64_t N = ctx.shape.rows(), L = ctx.stream_rows(), C = ctx.config.hidden;
  const int64_t I = w.fc_w.dim(0);
  const auto& in = static_cast<const Internals&>(*saved.internals);
  const auto ws = MemoryCategory::workspace;
  Buffer wide_buf, narrow_buf;
  Tensor wide = ctx.take(wide_buf, {N * std::max(I, ctx.qkv_width())}, ws, "block backward (wide)");
  Tensor narrow = ctx.take(narrow_buf, {N, C}, ws, "block backward (narrow)");

  // MLP; stream = d out.
  Tensor fc = ctx.view(in.fc, {N, I});
  Tensor gelu = wide.view(0, {N, I});
  ctx.be.gelu_forward(gelu, fc);
  Tensor dfc = gelu;  // gelu(fc) is no longer needed after the weight gradient: reuse it
  {
    Buffer rows_buf;
    const Tensor dout = ctx.gather_rows(rows_buf, stream, "mlp output gradient");
    ctx.be.linear_backward(Tensor(), false, g.mlp_proj_w, g.mlp_proj_b, dout, gelu, w.mlp_proj_w);
    ctx.be.linear_backward(dfc, false, Tensor(), Tensor(), dout, gelu, w.mlp_proj_w);
  }
  ctx.be.gelu_backward(dfc, fc, dfc);
  Tensor dln2 = narrow.view(0, {L, C});
  {
    Buffer rows_buf;
    column_parallel_backward(
        ctx, dln2, g.fc_w, g.fc_b, dfc,
        ctx.gather_rows(rows_buf, ctx.view(in.ln2.out, {L, C}), "mlp input (backward)"), w.fc_w);
  }
  // stream becomes d res2 = d out + LayerNorm-2 backward.
  norm_backward(ctx, NormKind::layernorm, stream, g.ln2_w, g.ln2_b, dln2,
                ctx.view(in.attention.res, {L, C}), w.ln2_w, in.ln2);
  attention_sublayer_backward(ctx, kAttention, attention_weights(w), attention_weights(g), x,
                              in.attention, stream, narrow, wide);
}

}  // namespace llmft
