#include "core/decoder/parallel_linear.h"

namespace llmft {

void row_parallel_forward(const BlockContext& ctx, Tensor out, Tensor inp, Tensor weight,
                          Tensor bias) {
  Buffer partial_buf;
  const Tensor partial = ctx.partial_rows(partial_buf, out, "row-parallel partial sums");
  ctx.be.linear_forward(partial, inp, weight, ctx.tp.rank == 0 ? bias : Tensor());
  ctx.reduce_rows(partial, out);
}

void column_parallel_backward(const BlockContext& ctx, Tensor dinp, Tensor dweight, Tensor dbias,
                              Tensor dout, Tensor inp, Tensor weight) {
  Buffer partial_buf;
  const Tensor partial = ctx.partial_rows(partial_buf, dinp, "column-parallel input gradient");
  ctx.be.linear_backward(partial, false, Tensor(), Tensor(), dout, inp, weight);
  std::unique_ptr<CommRequest> sum = ctx.start_reduce_rows(partial, dinp);
  ctx.be.linear_backward(Tensor(), false, dweight, dbias, dout, inp, weight);
  if (sum) sum->wait_on_device();
}

}  // namespace llmft
