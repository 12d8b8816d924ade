// The time model: one optimizer step of a layout on a device, predicted as compute plus
// the communication that compute does not hide.
//
// On a device whose kernel costs were measured (a calibration: device.h), compute is what
// the kernels of a dry run of the step take (step_work.h): grad_accum micro-batches and the
// step's own work, each product on the measured GEMM curve for its rows, attention from its
// measured cost at the run's head shape, every other kernel by its bytes at its kind's
// measured rate, and every kernel call's own cost (which dominates small steps).
//
// On a GPU preset with published kernel rates (device.h's kernel_model) and a 16-bit step,
// compute is the same dry run's kernels priced one by one (gpu_kernel_time.h): GEMMs at
// cuBLASLt's efficiency for their shape, attention at cuDNN's rate for its head size and
// length, every other kernel by its bytes at the HBM bandwidth, and a gap per kernel call.
//
// Otherwise compute is the step's FLOPs on one rank (parallel/flops.h's forward + backward, a
// recomputed forward per backward pass with checkpointing, a fused optimizer's extra
// backward, the optimizer's elementwise update), divided by tp, over the device's
// achieved rate: peak_flops x achieved_fraction, lowered for small GEMMs by x / (x + h)
// for their rows (micro_batch x seq_len) and for their columns (hidden / tp, the
// tensor-parallel slice), h the device's gemm_half_rate_rows (measured by calibration).
// Communication is step_collectives.h's calls, each priced by collective_cost.h over its group's
// link: a tensor-parallel group stays in a node when tp <= gpus_per_node, a data-parallel group
// crosses nodes when the world is larger than a node. A collective issued in pieces behind compute
// (DDP's gradient all-reduces, ZeRO-3's prefetched gathers) hides all but one piece, up
// to the length of that compute, on devices that overlap communication (GPUs; not CPU ranks).
//
// An offloaded optimizer (parallel/optimizer_offload.h) moves the update off the device:
// the host adds each micro-batch's gradient into its sums and updates, at the host's
// update bandwidth (on CPU ranks, the tallied host kernels at the device's own rates), and
// the copies cross the host link. On GPUs the host's work runs behind the backward passes
// (the update too when nothing waits for the global norm: no clipping, no fp16); the
// copies share the compute queue and are not hidden. On CPU ranks nothing overlaps.
#pragma once

#include "parallel/planner/device.h"
#include "parallel/planner/gpu_kernel_time.h"
#include "parallel/planner/layout.h"

namespace llmft {

struct StepTime {
  double compute_s = 0;
  double comm_s = 0;          // all collectives, as if nothing overlapped
  double exposed_comm_s = 0;  // the part the step waits for
  double host_s = 0;          // an offloaded optimizer's host work and copies not hidden
  double total_s = 0;         // compute_s + exposed_comm_s + host_s
  // compute_s by kernel class where the GPU kernel model priced it (else all zero).
  KernelSeconds kernels;
};

// REQUIRES: a fused optimizer has layout.grad_accum == 1
StepTime predict_step_time(const Workload& workload, const Layout& layout,
                           const DeviceDescription& device);

}  // namespace llmft
