#include "parallel/planner/step_time.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "parallel/flops.h"
#include "parallel/planner/step_collectives.h"
#include "parallel/planner/step_work.h"
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
  const double recomputed =
      static_cast<double>(std::min(l.checkpointed_blocks, w.model.n_layer)) / w.model.n_layer;
  s.backward = (2 * forward_per_token + recomputed * recompute_per_token) * rows / l.tp / rate;
  const double update = l.offload_optimizer
                            ? 0.0
                            : update_flops_per_element(w.optimizer) * updated_elements(w, l) / rate;
  s.step = l.grad_accum * (s.forward + backward_passes(w) * s.backward) + update;
  return s;
}

double gemm_seconds(double rows, double flops, const DeviceDescription& d) {
  return flops / (d.peak_flops * rows / (rows + d.gemm_half_rate_rows));
}

// One attention call: from the measured cost of its head shape, else as its products (4
// FLOPs per head, key and query pair and head dimension forward, 2.5 times that backward)
// at the GEMM rate.
double attention_seconds(const WorkTally::AttentionShape& shape, const DeviceDescription& d) {
  const auto [batch, queries, heads, kv_heads, head_dim, backward] = shape;
  const double pairs = queries * (queries + 1) / 2.0;
  const AttentionCost& a = d.attention;
  if (a.head_dim == head_dim && a.group == heads / kv_heads) {
    const double per_head = backward ? a.backward_quadratic * pairs + a.backward_linear * queries
                                     : a.forward_quadratic * pairs + a.forward_linear * queries;
    return static_cast<double>(batch) * heads * per_head;
  }
  const double flops = 4.0 * batch * heads * head_dim * pairs * (backward ? 2.5 : 1.0);
  return gemm_seconds(static_cast<double>(queries), flops, d);
}

// What the tallied kernels take on the device: products on the measured GEMM curve,
// attention from its own measurement, the other kernels' bytes at their kind's measured
// rate, and every call's own cost. (Tallies are differences of runs: a negative entry is
// rounding in nothing and counts as none.)
double tally_seconds(const WorkTally& t, const DeviceDescription& d) {
  double s = std::max<double>(0, static_cast<double>(t.kernel_calls)) * d.kernel_call_s;
  for (const auto& [rows, flops] : t.gemm_flops) {
    if (flops > 0) s += gemm_seconds(static_cast<double>(rows), flops, d);
  }
  for (const auto& [shape, calls] : t.attention) {
    if (calls > 0) s += static_cast<double>(calls) * attention_seconds(shape, d);
  }
  for (int k = 0; k < kKernelKinds; ++k) {
    const double rate = d.kernel_rates[k] > 0 ? d.kernel_rates[k] : d.memory_bandwidth;
    if (t.kernel_bytes[k] > 0) s += t.kernel_bytes[k] / rate;
  }
  return s;
}

// The step's compute from the kernels a dry run of it calls (step_work.h), for a device
// whose kernel costs were measured. The forward is a third of a micro-batch's work.
ComputeSeconds tallied_compute_seconds(const Layout& l, const DeviceDescription& d,
                                       const StepWork& work) {
  const double micro_batch = tally_seconds(work.micro_batch, d);
  ComputeSeconds s;
  s.forward = micro_batch / 3;
  s.backward = micro_batch - s.forward;
  s.step = l.grad_accum * micro_batch + tally_seconds(work.once, d);
  return s;
}

// The step's compute on a GPU preset, kernel by kernel (gpu_kernel_time.h); the forward
// is a third of a micro-batch's kernels.
ComputeSeconds gpu_compute_seconds(const Layout& l, const DeviceDescription& d,
                                   const StepWork& work, KernelSeconds& kernels) {
  const KernelSeconds micro_batch =
      gpu_kernel_seconds(work.micro_batch, d.kernel_model, d.peak_flops, d.attention_workspace);
  kernels = micro_batch.scaled(l.grad_accum);
  kernels += gpu_kernel_seconds(work.once, d.kernel_model, d.peak_flops, d.attention_workspace);
  ComputeSeconds s;
  s.forward = micro_batch.total() / 3;
  s.backward = micro_batch.total() - s.forward;
  s.step = kernels.total();
  return s;
}

// An offloaded optimizer's host work: per micro-batch (its gradient added into the sums)
// and per step (the update), and the copies of a step.
struct HostSeconds {
  double micro_batch = 0, once = 0, copies = 0;
};

// From the bytes each element moves: the gradient received (compute dtype) and its f32 sum
// read and written; the update reads the sum, reads and writes the master and the state
// (AdamW's two moments, SGD's momentum) and writes the rounded weights; copies carry each
// micro-batch's gradient out and the weights in.
HostSeconds host_seconds(const Workload& w, const Layout& l, const DeviceDescription& d) {
  const double elements = updated_elements(w, l);
  const double compute =
      static_cast<double>(dtype_size(d.compute == ComputeRule::f32 ? DType::f32 : w.dtype));
  const double stored = static_cast<double>(dtype_size(w.dtype));
  const double state = w.optimizer.kind == OptimizerKind::adamw ? 16
                       : w.optimizer.momentum != 0.0f           ? 8
                                                                : 0;
  const double link = d.host_link_bandwidth > 0 ? d.host_link_bandwidth : d.host_update_bandwidth;
  HostSeconds h;
  h.micro_batch = elements * (compute + 8) / d.host_update_bandwidth;
  h.once = elements * (4 + 8 + state + stored) / d.host_update_bandwidth;
  h.copies = elements * (l.grad_accum * compute + stored) / link;
  return h;
}

// The offloaded optimizer's part of the step that compute does not hide. `work`: the
// step's tally, on a calibrated device.
double exposed_host_seconds(const Workload& w, const Layout& l, const DeviceDescription& d,
                            const ComputeSeconds& compute, const std::optional<StepWork>& work) {
  if (!l.offload_optimizer) return 0;
  if (d.host_link_bandwidth <= 0 && work) {
    // CPU ranks, calibrated: the tallied host kernels on the same cores (the copies are in
    // the device's tally already).
    return l.grad_accum * tally_seconds(work->host_micro_batch, d) +
           tally_seconds(work->host_once, d);
  }
  const HostSeconds h = host_seconds(w, l, d);
  const double host = l.grad_accum * h.micro_batch + h.once;
  if (d.host_link_bandwidth <= 0) return host + h.copies;  // the host is the device
  const bool update_in_backward = !w.clip_grad && w.dtype != DType::f16;
  const double behind_backward = l.grad_accum * h.micro_batch + (update_in_backward ? h.once : 0);
  return host - std::min(behind_backward, l.grad_accum * compute.backward) + h.copies;
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
  // One dry run's tally serves the device's compute and an offloaded optimizer's host work.
  const bool calibrated = d.memory_bandwidth > 0;
  const bool per_kernel = !calibrated && gpu_kernel_model_applies(d.kernel_model, w.dtype);
  std::optional<StepWork> work;
  if (calibrated || per_kernel) work = step_work(w, l, d.compute);
  StepTime t;
  ComputeSeconds compute;
  if (calibrated) {
    compute = tallied_compute_seconds(l, d, *work);
  } else if (per_kernel) {
    compute = gpu_compute_seconds(l, d, *work, t.kernels);
  } else {
    compute = compute_seconds(w, l, d);
  }
  t.compute_s = compute.step;
  for (const CollectiveCall& c : step_collectives(w, l, d.compute)) {
    const int ranks = c.group == CommGroup::tensor_parallel ? l.tp : l.dp;
    const double seconds =
        collective_seconds(c.op, c.bytes, c.pieces, ranks, link_of(c.group, l, d));
    // All pieces but the one issued last (or needed first) can run behind the compute,
    // where the device runs collectives while it computes.
    const double hidden = d.overlaps_communication ? std::min(seconds * (c.pieces - 1) / c.pieces,
                                                              hiding_compute(c.overlap, compute))
                                                   : 0.0;
    t.comm_s += c.count * seconds;
    t.exposed_comm_s += c.count * (seconds - hidden);
  }
  t.host_s = exposed_host_seconds(w, l, d, compute, work);
  t.total_s = t.compute_s + t.exposed_comm_s + t.host_s;
  return t;
}

}  // namespace llmft
