#include "core/decoder/norm.h"

namespace llmft {

Tensor norm_forward(const BlockContext& ctx, NormKind kind, Tensor weight, Tensor bias, Tensor x,
                    NormSaved& saved, const std::string& name) {
  const int64_t N = ctx.shape.rows(), C = ctx.config.hidden;
  const auto act = MemoryCategory::activations;
  Tensor out = ctx.take(saved.out, {N, C}, act, name + " output");
  Tensor rstd = ctx.take_f32(saved.rstd, {N}, act, name + " rstd");
  if (kind == NormKind::layernorm) {
    Tensor mean = ctx.take_f32(saved.mean, {N}, act, name + " mean");
    ctx.be.layernorm_forward(out, mean, rstd, x, weight, bias, ctx.config.norm_eps);
  } else {
    ctx.be.rmsnorm_forward(out, rstd, x, weight, ctx.config.norm_eps);
  }
  return out;
}

void norm_backward(const BlockContext& ctx, NormKind kind, Tensor dx, Tensor dweight, Tensor dbias,
                   Tensor dout, Tensor x, Tensor weight, const NormSaved& saved) {
  const int64_t N = ctx.shape.rows();
  Tensor rstd = saved.rstd.as(DType::f32, {N});
  if (kind == NormKind::layernorm) {
    ctx.be.layernorm_backward(dx, dweight, dbias, dout, x, weight, saved.mean.as(DType::f32, {N}),
                              rstd);
  } else {
    ctx.be.rmsnorm_backward(dx, dweight, dout, x, weight, rstd);
  }
}

}  // namespace llmft
