#include "core/decoder/norm.h"

namespace llmft {

namespace {

// The norm's output and statistics, taken for backward.
struct NormOutputs {
  Tensor out, mean, rstd;  // mean only for LayerNorm
};

NormOutputs take_norm_outputs(const BlockContext& ctx, NormKind kind, NormSaved& saved,
                              const std::string& name) {
  const int64_t N = ctx.stream_rows(), C = ctx.config.hidden;
  const auto act = MemoryCategory::activations;
  NormOutputs o;
  o.out = ctx.take(saved.out, {N, C}, act, name + " output");
  o.rstd = ctx.take_f32(saved.rstd, {N}, act, name + " rstd");
  if (kind == NormKind::layernorm) o.mean = ctx.take_f32(saved.mean, {N}, act, name + " mean");
  return o;
}

}  // namespace

Tensor norm_forward(const BlockContext& ctx, NormKind kind, Tensor weight, Tensor bias, Tensor x,
                    NormSaved& saved, const std::string& name) {
  const NormOutputs o = take_norm_outputs(ctx, kind, saved, name);
  if (kind == NormKind::layernorm) {
    ctx.be.layernorm_forward(o.out, o.mean, o.rstd, x, weight, bias, ctx.config.norm_eps);
  } else {
    ctx.be.rmsnorm_forward(o.out, o.rstd, x, weight, ctx.config.norm_eps);
  }
  return o.out;
}

Tensor residual_norm_forward(const BlockContext& ctx, NormKind kind, Tensor weight, Tensor bias,
                             Tensor residual, Tensor x, NormSaved& saved, const std::string& name) {
  const NormOutputs o = take_norm_outputs(ctx, kind, saved, name);
  if (kind == NormKind::layernorm) {
    ctx.be.residual_layernorm_forward(residual, x, o.out, o.mean, o.rstd, weight, bias,
                                      ctx.config.norm_eps);
  } else {
    ctx.be.residual_rmsnorm_forward(residual, x, o.out, o.rstd, weight, ctx.config.norm_eps);
  }
  return o.out;
}

namespace {

void norm_kernel_backward(const BlockContext& ctx, NormKind kind, Tensor dx, Tensor dweight,
                          Tensor dbias, Tensor dout, Tensor x, Tensor weight,
                          const NormSaved& saved) {
  const int64_t N = ctx.stream_rows();
  Tensor rstd = saved.rstd.as(DType::f32, {N});
  if (kind == NormKind::layernorm) {
    ctx.be.layernorm_backward(dx, dweight, dbias, dout, x, weight, saved.mean.as(DType::f32, {N}),
                              rstd);
  } else {
    ctx.be.rmsnorm_backward(dx, dweight, dout, x, weight, rstd);
  }
}

}  // namespace

void norm_backward(const BlockContext& ctx, NormKind kind, Tensor dx, Tensor dweight, Tensor dbias,
                   Tensor dout, Tensor x, Tensor weight, const NormSaved& saved) {
  if (!ctx.sequence_parallel) {
    norm_kernel_backward(ctx, kind, dx, dweight, dbias, dout, x, weight, saved);
    return;
  }
  // This rank's rows give part of the weight's (and bias's) gradient: the group sums the
  // parts, so every rank adds the whole gradient, as without sequence parallelism.
  // In the gradients' dtype: f32 where they are summed in f32.
  const int64_t C = weight.numel();
  const Shape parts_shape{(dbias.defined() ? 2 : 1) * C};
  Buffer parts_buf;
  const auto ws = MemoryCategory::workspace;
  const std::string what = "norm gradient parts";
  Tensor parts = dweight.dtype == DType::f32 ? ctx.take_f32(parts_buf, parts_shape, ws, what)
                                             : ctx.take(parts_buf, parts_shape, ws, what);
  ctx.be.fill(parts, 0.0f);
  const Tensor weight_part = parts.view(0, {C});
  const Tensor bias_part = dbias.defined() ? parts.view(C, {C}) : Tensor();
  norm_kernel_backward(ctx, kind, dx, weight_part, bias_part, dout, x, weight, saved);
  ctx.tp_reduce(parts);
  ctx.be.add_inplace(dweight, weight_part);
  if (dbias.defined()) ctx.be.add_inplace(dbias, bias_part);
}

}  // namespace llmft
