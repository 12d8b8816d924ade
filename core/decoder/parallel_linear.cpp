#include "core/decoder/parallel_linear.h"

namespace llmft {

void row_parallel_forward(const BlockContext& ctx, Tensor out, Tensor inp, Tensor weight,
                          Tensor bias) {
  ctx.be.linear_forward(out, inp, weight, ctx.tp.rank == 0 ? bias : Tensor());
  ctx.tp_reduce(out);
}

void column_parallel_backward(const BlockContext& ctx, Tensor dinp, Tensor dweight, Tensor dbias,
                              Tensor dout, Tensor inp, Tensor weight) {
  ctx.be.linear_backward(dinp, false, Tensor(), Tensor(), dout, inp, weight);
  std::unique_ptr<CommRequest> sum = ctx.start_tp_reduce(dinp);
  ctx.be.linear_backward(Tensor(), false, dweight, dbias, dout, inp, weight);
  if (sum) sum->wait();
}

}  // namespace llmft
