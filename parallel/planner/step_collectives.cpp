#include "parallel/planner/step_collectives.h"

#include <algorithm>

#include "parallel/shard.h"

namespace llmft {

namespace {

constexpr double kF32 = 4;  // the cross-entropy's statistics

void add_tensor_parallel(const Workload& w, const Layout& l, double compute_bytes,
                         std::vector<CollectiveCall>& calls) {
  const double tokens = static_cast<double>(l.micro_batch) * w.seq_len;
  const double activation = tokens * w.model.hidden * compute_bytes;
  const int backwards = backward_passes(w);
  const int blocks = w.model.n_layer;
  // Each backward pass runs the checkpointed blocks' forward again.
  const int block_forwards = blocks + backwards * std::min(l.checkpointed_blocks, blocks);
  const auto all_reduce = Collective::all_reduce;
  const auto tp = CommGroup::tensor_parallel;
  const auto none = Overlap::none;
  const int block_sums = (2 * block_forwards + 2 * backwards * blocks) * l.grad_accum;
  if (l.sequence_parallel) {
    // Each sum of the stream is a reduce-scatter into it, each use of every row an
    // all-gather out of it: in backward also the column-parallel inputs again (for the
    // weight gradients), and the norms' weight gradients are summed over the group.
    const auto reduce_scatter = Collective::reduce_scatter, all_gather = Collective::all_gather;
    const int backward_passes_run = backwards * l.grad_accum;
    const double norm_params = (w.model.family == ModelFamily::gpt2 ? 2.0 : 1.0) * w.model.hidden;
    calls.push_back({"block reduce-scatters", reduce_scatter, tp, activation, 1, block_sums, none});
    calls.push_back({"block all-gathers", all_gather, tp, activation, 1,
                     block_sums + 2 * blocks * backward_passes_run, none});
    calls.push_back(
        {"embedding reduce-scatter", reduce_scatter, tp, activation, 1, l.grad_accum, none});
    calls.push_back({"embedding gradient all-gather", all_gather, tp, activation, 1,
                     backward_passes_run, none});
    calls.push_back({"head input all-gathers", all_gather, tp, activation, 1,
                     l.grad_accum + backward_passes_run, none});
    calls.push_back({"head input-gradient reduce-scatter", reduce_scatter, tp, activation, 1,
                     backward_passes_run, none});
    calls.push_back({"norm weight-gradient all-reduces", all_reduce, tp,
                     norm_params * compute_bytes, 1, (2 * blocks + 1) * backward_passes_run, none});
  } else {
    calls.push_back({"block all-reduces", all_reduce, tp, activation, 1, block_sums, none});
    calls.push_back({"embedding all-reduce", all_reduce, tp, activation, 1, l.grad_accum, none});
    calls.push_back({"head input-gradient all-reduce", all_reduce, tp, activation, 1,
                     backwards * l.grad_accum, none});
  }
  calls.push_back(
      {"cross-entropy row maxima", all_reduce, tp, tokens * kF32, 1, l.grad_accum, none});
  calls.push_back({"cross-entropy exp-sums and target logits", all_reduce, tp, 2 * tokens * kF32, 1,
                   l.grad_accum, none});
}

void add_data_parallel(const Workload& w, const Layout& l, double compute_bytes,
                       std::vector<CollectiveCall>& calls) {
  const double params = static_cast<double>(parameter_count(w.model)) / l.tp;
  // Stored gradients and weights in the stored dtype; transient gradients in the compute one.
  const double stored = params * dtype_size(w.dtype), transient = params * compute_bytes;
  const int units = w.model.n_layer + 2, z = l.zero_stage, backwards = backward_passes(w);
  const auto dp = CommGroup::data_parallel;
  const auto none = Overlap::none;
  if (z == 3) {
    calls.push_back({"weight all-gathers (forward)", Collective::all_gather, dp, stored, units,
                     l.grad_accum, Overlap::forward_prefetch});
    calls.push_back({"weight all-gathers (backward)", Collective::all_gather, dp, stored, units,
                     backwards * l.grad_accum, Overlap::backward_prefetch});
  }
  if (is_fused(w.optimizer.kind)) {
    if (fused_reduce_scatters(w.optimizer.kind, z)) {
      calls.push_back({"gradient reduce-scatters", Collective::reduce_scatter, dp, transient, units,
                       backwards, none});
      if (z == 2) {
        calls.push_back({"weight all-gathers", Collective::all_gather, dp, stored, units, 1, none});
      }
      return;
    }
    calls.push_back(
        {"gradient all-reduces", Collective::all_reduce, dp, transient, units, backwards, none});
    if (z == 3) {
      calls.push_back(
          {"weight all-gathers (update)", Collective::all_gather, dp, stored, units, 1, none});
    }
    return;
  }
  if (l.offload_optimizer) {
    // Every micro-batch's gradients leave the device reduced (parallel/engine.h).
    if (z == 0) {
      calls.push_back({"gradient all-reduces", Collective::all_reduce, dp, transient, units,
                       l.grad_accum, none});
    } else {
      calls.push_back({"gradient reduce-scatters", Collective::reduce_scatter, dp, transient, units,
                       l.grad_accum, none});
    }
  } else {
    switch (z) {
      case 0:
        calls.push_back({"gradient all-reduces", Collective::all_reduce, dp, stored, units, 1,
                         Overlap::backward});
        break;
      case 1:
        calls.push_back(
            {"gradient reduce-scatters", Collective::reduce_scatter, dp, stored, units, 1, none});
        break;
      default:  // in flight behind the next unit's backward where collectives overlap
        calls.push_back({"gradient reduce-scatters", Collective::reduce_scatter, dp, transient,
                         units, l.grad_accum, Overlap::backward});
    }
  }
  if (z == 1 || z == 2) {
    calls.push_back({"weight all-gathers", Collective::all_gather, dp, stored, units, 1, none});
  }
}

}  // namespace

int backward_passes(const Workload& w) {
  return is_fused(w.optimizer.kind) && (w.clip_grad || w.dtype == DType::f16) ? 2 : 1;
}

std::vector<CollectiveCall> step_collectives(const Workload& w, const Layout& l, ComputeRule rule) {
  std::vector<CollectiveCall> calls;
  const double compute_bytes = static_cast<double>(dtype_size(compute_dtype(rule, w.dtype)));
  if (l.tp > 1) add_tensor_parallel(w, l, compute_bytes, calls);
  if (l.dp > 1) add_data_parallel(w, l, compute_bytes, calls);
  return calls;
}

}  // namespace llmft
