#include "parallel/planner/layout.h"

#include <sstream>

namespace llmft {

RunShape run_shape(const Workload& w, const Layout& l, int dp_rank, int tp_rank) {
  RunShape shape;
  shape.micro_batch = l.micro_batch;
  shape.seq_len = w.seq_len;
  shape.dtype = w.dtype;
  shape.checkpointed_blocks = l.checkpointed_blocks;
  shape.optimizer = w.optimizer;
  shape.clip_grad = w.clip_grad;
  shape.offload_optimizer = l.offload_optimizer;
  shape.sequence_parallel = l.sequence_parallel;
  shape.zero_stage = l.zero_stage;
  shape.ranks = l.dp;
  shape.rank = dp_rank;
  shape.tp = l.tp;
  shape.tp_rank = tp_rank;
  return shape;
}

std::string describe_workload(const Workload& w) {
  std::ostringstream os;
  os << w.model.name << " (" << parameter_count_text(static_cast<double>(parameter_count(w.model)))
     << " parameters), " << optimizer_kind_name(w.optimizer.kind) << ", " << dtype_name(w.dtype)
     << ", seq-len " << w.seq_len << ", global batch " << w.global_batch;
  if (w.dtype != DType::f32 && !is_fused(w.optimizer.kind)) {
    os << ", gradient sums in "
       << dtype_name(accumulated_grad_dtype(w.optimizer.grad_accum_dtype, w.dtype));
  }
  return os.str();
}

std::string describe_layout(const Layout& l) {
  std::ostringstream os;
  os << "dp " << l.dp << " x tp " << l.tp << ", ZeRO-" << l.zero_stage << ", micro-batch "
     << l.micro_batch;
  if (l.grad_accum > 1) os << " x " << l.grad_accum << " accumulated";
  if (l.checkpointed_blocks > 0) os << ", checkpointing " << l.checkpointed_blocks << " blocks";
  if (l.sequence_parallel) os << ", sequence parallel";
  if (l.offload_optimizer) os << ", optimizer offloaded";
  return os.str();
}

}  // namespace llmft
