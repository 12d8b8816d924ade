#include "core/gpt2/gpt2_block.h"

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

Tensor f32_buffer(Allocator& alloc, Buffer& buf, Shape shape, MemoryCategory c,
                  const std::string& what) {
  buf = alloc.allocate(static_cast<size_t>(shape_numel(shape)) * 4, c, what);
  return buf.as(DType::f32, std::move(shape));
}

Tensor t32(const Buffer& buf, Shape shape) {
  return buf.as(DType::f32, std::move(shape));
}

}  // namespace

UnitLayout gpt2_block_layout(const ModelConfig& c, int layer) {
  const std::string p = "transformer.h." + std::to_string(layer) + ".";
  const int64_t C = c.hidden, I = c.intermediate;
  const int64_t qkv = C + 2 * static_cast<int64_t>(c.n_kv_head) * c.head_dim();
  // Residual projections are scaled by 1/sqrt(2 L), as in GPT-2.
  const float proj_std = kInitStd / std::sqrt(2.0f * c.n_layer);
  UnitLayout u;
  u.name = "block." + std::to_string(layer);
  u.add(param(p + "ln_1.weight", {C}, false, 0.0f, 1.0f));
  u.add(param(p + "ln_1.bias", {C}, false, 0.0f));
  u.add(param(p + "attn.c_attn.weight", {qkv, C}, true, kInitStd));
  u.add(param(p + "attn.c_attn.bias", {qkv}, false, 0.0f));
  u.add(param(p + "attn.c_proj.weight", {C, C}, true, proj_std));
  u.add(param(p + "attn.c_proj.bias", {C}, false, 0.0f));
  u.add(param(p + "ln_2.weight", {C}, false, 0.0f, 1.0f));
  u.add(param(p + "ln_2.bias", {C}, false, 0.0f));
  u.add(param(p + "mlp.c_fc.weight", {I, C}, true, kInitStd));
  u.add(param(p + "mlp.c_fc.bias", {I}, false, 0.0f));
  u.add(param(p + "mlp.c_proj.weight", {C, I}, true, proj_std));
  u.add(param(p + "mlp.c_proj.bias", {C}, false, 0.0f));
  return u;
}

Gpt2BlockWeights bind_gpt2_block(const UnitLayout& u, const Tensor& flat) {
  Gpt2BlockWeights w;
  Tensor* fields[] = {&w.ln1_w, &w.ln1_b, &w.qkv_w, &w.qkv_b, &w.attn_proj_w, &w.attn_proj_b,
                      &w.ln2_w, &w.ln2_b, &w.fc_w,  &w.fc_b,  &w.mlp_proj_w,  &w.mlp_proj_b};
  for (int i = 0; i < 12; ++i) *fields[i] = u.slice(flat, i);
  return w;
}

void gpt2_block_forward(Backend& be, Allocator& alloc, const ModelConfig& c, BlockShape s,
                        const Gpt2BlockWeights& w, Tensor x, Gpt2BlockSaved& sv) {
  const int64_t N = s.rows(), C = c.hidden, I = c.intermediate, QKV = w.qkv_w.dim(0);
  const auto act = MemoryCategory::activations;
  Tensor ln1 = f32_buffer(alloc, sv.ln1, {N, C}, act, "ln_1 output");
  Tensor ln1_mean = f32_buffer(alloc, sv.ln1_mean, {N}, act, "ln_1 mean");
  Tensor ln1_rstd = f32_buffer(alloc, sv.ln1_rstd, {N}, act, "ln_1 rstd");
  be.layernorm_forward(ln1, ln1_mean, ln1_rstd, x, w.ln1_w, w.ln1_b, c.norm_eps);

  Tensor qkv = f32_buffer(alloc, sv.qkv, {N, QKV}, act, "qkv");
  be.linear_forward(qkv, ln1, w.qkv_w, w.qkv_b);
  Tensor att = f32_buffer(alloc, sv.att, {N, C}, act, "attention output");
  Tensor lse = f32_buffer(alloc, sv.lse, {s.batch, c.n_head, s.seq_len}, act, "attention lse");
  be.attention_forward(att, lse, qkv.reshaped({s.batch, s.seq_len, QKV}), c.n_head, c.n_kv_head);

  Tensor res2 = f32_buffer(alloc, sv.res2, {N, C}, act, "attention residual");
  be.linear_forward(res2, att, w.attn_proj_w, w.attn_proj_b);
  be.add_inplace(res2, x);

  Tensor ln2 = f32_buffer(alloc, sv.ln2, {N, C}, act, "ln_2 output");
  Tensor ln2_mean = f32_buffer(alloc, sv.ln2_mean, {N}, act, "ln_2 mean");
  Tensor ln2_rstd = f32_buffer(alloc, sv.ln2_rstd, {N}, act, "ln_2 rstd");
  be.layernorm_forward(ln2, ln2_mean, ln2_rstd, res2, w.ln2_w, w.ln2_b, c.norm_eps);

  Tensor fc = f32_buffer(alloc, sv.fc, {N, I}, act, "mlp c_fc output");
  be.linear_forward(fc, ln2, w.fc_w, w.fc_b);
  Buffer gelu_buf;
  Tensor gelu = f32_buffer(alloc, gelu_buf, {N, I}, MemoryCategory::workspace, "gelu output");
  be.gelu_forward(gelu, fc);

  Tensor out = f32_buffer(alloc, sv.out, {N, C}, act, "block output");
  be.linear_forward(out, gelu, w.mlp_proj_w, w.mlp_proj_b);
  be.add_inplace(out, res2);
}

void gpt2_block_backward(Backend& be, Allocator& alloc, const ModelConfig& c, BlockShape s,
                         const Gpt2BlockWeights& w, const Gpt2BlockWeights& g, Tensor x,
                         const Gpt2BlockSaved& sv, Tensor stream) {
  const int64_t N = s.rows(), C = c.hidden, I = c.intermediate, QKV = w.qkv_w.dim(0);
  const auto ws = MemoryCategory::workspace;
  Buffer wide_buf, narrow_buf;
  Tensor wide = f32_buffer(alloc, wide_buf, {N * std::max(I, QKV)}, ws, "block backward (wide)");
  Tensor narrow = f32_buffer(alloc, narrow_buf, {N, C}, ws, "block backward (narrow)");
  Tensor fc = t32(sv.fc, {N, I});

  // MLP: stream = d out.
  Tensor gelu = wide.view(0, {N, I});
  be.gelu_forward(gelu, fc);
  be.linear_backward(Tensor(), false, g.mlp_proj_w, g.mlp_proj_b, stream, gelu, w.mlp_proj_w);
  Tensor dfc = gelu;  // gelu(fc) is no longer needed: reuse its memory
  be.linear_backward(dfc, false, Tensor(), Tensor(), stream, gelu, w.mlp_proj_w);
  be.gelu_backward(dfc, fc, dfc);
  Tensor ln2 = t32(sv.ln2, {N, C});
  be.linear_backward(narrow, false, g.fc_w, g.fc_b, dfc, ln2, w.fc_w);
  // stream becomes d res2 = d out + LayerNorm-2 backward.
  be.layernorm_backward(stream, g.ln2_w, g.ln2_b, narrow, t32(sv.res2, {N, C}), w.ln2_w,
                        t32(sv.ln2_mean, {N}), t32(sv.ln2_rstd, {N}));

  // Attention.
  Tensor att = t32(sv.att, {N, C});
  be.linear_backward(narrow, false, g.attn_proj_w, g.attn_proj_b, stream, att, w.attn_proj_w);
  Tensor dqkv = wide.view(0, {s.batch, s.seq_len, QKV});
  Tensor qkv = t32(sv.qkv, {s.batch, s.seq_len, QKV});
  be.attention_backward(dqkv, narrow, qkv, att, t32(sv.lse, {s.batch, c.n_head, s.seq_len}),
                        c.n_head, c.n_kv_head);
  Tensor ln1 = t32(sv.ln1, {N, C});
  be.linear_backward(narrow, false, g.qkv_w, g.qkv_b, dqkv.reshaped({N, QKV}), ln1, w.qkv_w);
  // stream becomes d x = d res2 + LayerNorm-1 backward.
  be.layernorm_backward(stream, g.ln1_w, g.ln1_b, narrow, x, w.ln1_w, t32(sv.ln1_mean, {N}),
                        t32(sv.ln1_rstd, {N}));
}

}  // namespace llmft
