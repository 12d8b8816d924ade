#include "parallel/planner/step_time.h"

#include <algorithm>

#include "parallel/flops.h"
#include "parallel/planner/step_collectives.h"
#include "parallel/shard.h"

namespace llmft {

namespace {

// The share of the large-GEMM rate that GEMMs of `rows` rows and `columns` output
// columns (a tensor-parallel slice) reach.
double gemm_efficiency(double rows, double columns, double half_rate) {
  return rows / (rows + half_rate) * columns / (columns + half_rate);
}

// FLOPs of the update per element the optimizer updates.
double update_flops_per_element(const OptimizerConfig& optimizer) {
  switch (optimizer.kind) {
    case OptimizerKind::adamw:
      return 12;
    case OptimizerKind::sgd:
      return optimizer.momentum != 0.0f ? 4 : 2;
    case OptimizerKind::lomo:
      return 2;
    case OptimizerKind::adalomo:
      return 8;
  }
  return 0;
}

// The elements of the model one rank's optimizer updates.
double updated_elements(const Workload& w, const Layout& l) {
  const ShardLayout model = shard_layout(parameter_count(w.model) / l.tp, l.dp, 0);
  return static_cast<double>(update_span(w.optimizer.kind, l.zero_stage, model).size());
}

// Seconds of one micro-batch's passes and of the whole step's compute on one rank.
struct ComputeSeconds {
  double forward = 0;
  double backward = 0;  // one backward pass, with its recomputed forward
  double step = 0;
};

ComputeSeconds compute_seconds(const Workload& w, const Layout& l, const DeviceDescription& d) {
  const double rows = static_cast<double>(l.micro_batch) * w.seq_len;
  const double columns = static_cast<double>(w.model.hidden) / l.tp;
  const double rate =
      d.peak_flops * d.achieved_fraction * gemm_efficiency(rows, columns, d.gemm_half_rate_rows);
  const double forward_per_token = training_flops_per_token(w.model, w.seq_len) / 3;
  // Checkpointing recomputes the blocks, not the head's vocab x hidden product.
  const double recompute_per_token =
      forward_per_token - 2.0 * w.model.vocab_size * static_cast<double>(w.model.hidden);
  ComputeSeconds s;
  s.forward = forward_per_token * rows / l.tp / rate;
  s.backward = (2 * forward_per_token + (l.activation_checkpointing ? recompute_per_token : 0)) *
               rows / l.tp / rate;
  const double update = update_flops_per_element(w.optimizer) * updated_elements(w, l) / rate;
  s.step = l.grad_accum * (s.forward + backward_passes(w) * s.backward) + update;
  return s;
}

Link link_of(CommGroup group, const Layout& l, const DeviceDescription& d) {
  const bool crosses_nodes =
      group == CommGroup::tensor_parallel ? l.tp > d.gpus_per_node : l.world() > d.gpus_per_node;
  return crosses_nodes ? d.inter_node : d.intra_node;
}

double hiding_compute(Overlap overlap, const ComputeSeconds& s) {
  switch (overlap) {
    case Overlap::none:
      return 0;
    case Overlap::forward_prefetch:
      return s.forward;
    case Overlap::backward:
    case Overlap::backward_prefetch:
      return s.backward;
  }
  return 0;
}

}  // namespace

StepTime predict_step_time(const Workload& w, const Layout& l, const DeviceDescription& d) {
  const ComputeSeconds compute = compute_seconds(w, l, d);
  StepTime t;
  t.compute_s = compute.step;
  for (const CollectiveCall& c : step_collectives(w, l, d.compute)) {
    const int ranks = c.group == CommGroup::tensor_parallel ? l.tp : l.dp;
    const double seconds =
        collective_seconds(c.op, c.bytes, c.pieces, ranks, link_of(c.group, l, d));
    // All pieces but the one issued last (or needed first) can run behind the compute.
    const double hidden =
        std::min(seconds * (c.pieces - 1) / c.pieces, hiding_compute(c.overlap, compute));
    t.comm_s += c.count * seconds;
    t.exposed_comm_s += c.count * (seconds - hidden);
  }
  t.total_s = t.compute_s + t.exposed_comm_s;
  return t;
}

}  // namespace llmft
