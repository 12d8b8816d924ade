// DeviceDescription: what the planner needs to know about one accelerator and how the
// job's devices are wired — memory, 16-bit dense FLOP/s and the share of it a training
// step achieves, the bandwidth and latency of collectives inside a node and across
// nodes, the fixed memory the runtime takes before the first allocation (CUDA context,
// cuBLAS workspace, loaded kernels) and what the communicators take (NCCL). Presets hold
// published figures; a calibration (calibration.h) replaces them with measured ones.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/attention_workspace.h"
#include "core/compute_dtype.h"
#include "core/counting/work_tally.h"
#include "parallel/planner/gpu_kernel_model.h"

namespace llmft {

// How fast one collective runs over one kind of connection, as the ring model prices it
// (collective_cost.h).
struct CollectiveRate {
  double bandwidth = 0;  // bytes/s each device sends
  double latency_s = 0;  // per step of the ring
};

// How fast collectives run over one kind of connection, each of those a step runs at its
// own rate: NCCL and MPI choose their algorithm, protocol and channels per collective, so
// a reduce-scatter's or an all-gather's bytes/s is not the all-reduce's. A broadcast is
// priced as an all-gather (a pipelined broadcast moves as much in as many steps). Presets
// give all three the connection's published figures; a calibration measures each.
struct Link {
  CollectiveRate all_reduce, reduce_scatter, all_gather;
  const CollectiveRate& rate(Collective op) const;
  CollectiveRate& rate(Collective op);
  // Whether it was measured (or set): a bandwidth of 0 is a link nobody measured.
  bool known() const { return all_reduce.bandwidth > 0; }
};

// The collectives a link holds a rate of, in the order links are measured and stored.
constexpr Collective kLinkCollectives[] = {Collective::all_reduce, Collective::reduce_scatter,
                                           Collective::all_gather};

// The same rate for every collective.
Link uniform_link(double bandwidth, double latency_s);

// Attention's measured cost for one head shape (parallel/planner/device_benchmark.h): the
// seconds one head of one sequence of T queries takes, causal, as quadratic x T(T+1)/2 +
// linear x T, forward and backward (its recomputation of the probabilities included).
struct AttentionCost {
  int64_t head_dim = 0;  // 0: not measured; attention is priced as products at the GEMM rate
  int64_t group = 1;     // query heads per key/value head
  double forward_quadratic = 0, forward_linear = 0;
  double backward_quadratic = 0, backward_linear = 0;
};

struct DeviceDescription {
  std::string name;
  size_t memory_bytes = 0;
  double peak_flops = 0;         // dense 16-bit tensor FLOP/s (f32 GEMM on CPU)
  double achieved_fraction = 0;  // share of peak_flops a whole training step achieves
  // A GEMM with this many rows (or columns) runs at half the rate of a large one.
  double gemm_half_rate_rows = 32;
  Link intra_node;  // between the devices of one node
  Link inter_node;  // between nodes
  int gpus_per_node = 1;
  // A GPU preset's compute capability, 10 x major + minor (0: the CPU). Below
  // kMinimumCudaComputeCapability llmft cannot run there (llmft_runs_on): a plan for it
  // is a comparison.
  int compute_capability = 0;
  // Whether a collective issued behind compute runs while the compute does: on GPUs, NCCL
  // on its own stream; not on CPU ranks, where Open MPI (no progress thread) moves a
  // non-blocking collective only inside MPI calls, so it waits until the step waits.
  bool overlaps_communication = true;
  size_t overhead_bytes = 0;       // fixed runtime memory per device
  bool overhead_measured = false;  // false: overhead_bytes is the preset's assumption
  // What a job's communicators hold per device outside the allocator (NCCL's state and
  // buffers: the world's, which the groups split from it share), charged as comm_buffers
  // to layouts of more than one rank; 0 where collectives use no device memory of their
  // own (MPI).
  size_t communicator_bytes = 0;
  bool communicator_measured = false;  // false: communicator_bytes is the preset's assumption
  // Optimizer offload (parallel/optimizer_offload.h): the host memory per device (a node's
  // share), the bytes/s a copy between device and host moves (PCIe; 0: the host is the
  // device, copies are priced as copies) and the bytes/s the host's update kernels stream
  // per device (0: the device's own kernel rates, on CPU ranks).
  size_t host_memory_bytes = 0;
  bool host_memory_measured = false;  // false: the preset's assumption
  double host_link_bandwidth = 0;
  double host_update_bandwidth = 0;
  // How its backend computes (core/compute_dtype.h): GPUs in the stored dtype, the CPU
  // in f32. The memory model predicts that backend's allocations.
  ComputeRule compute = ComputeRule::stored;
  // Its attention backward's workspace (core/attention_workspace.h): GPU presets from
  // Ampere on assume a build with cuDNN and its default, deterministic backward; a job on
  // a GPU takes its backend's own rule.
  AttentionWorkspaceRule attention_workspace = AttentionWorkspaceRule::none;
  // Measured by a calibration (0: not measured; achieved_fraction then stands for all but
  // the products): the bytes/s of a kernel that streams 64 MiB and the seconds a kernel
  // call costs on its own. With them the time model prices every kernel a step runs
  // (parallel/planner/step_work.h).
  double memory_bandwidth = 0, kernel_call_s = 0;
  // Measured by --auto-plan at the run's shapes: each kind of kernel's bytes/s
  // (kernel_benchmark.h; 0: not measured, memory_bandwidth stands in) and attention's cost.
  std::array<double, kKernelKinds> kernel_rates{};
  AttentionCost attention;
  // Published per-kernel rates of a GPU preset (h100-80g, h200): with them an uncalibrated
  // plan prices every kernel a 16-bit step calls (gpu_kernel_time.h); other presets have
  // none and price the step's FLOPs at achieved_fraction of the peak.
  GpuKernelModel kernel_model;
};

// "v100-16g", "v100-32g", "rtx3090", "a100-40g", "a100-80g", "h100-80g", "h200", or
// "cpu": this whole machine's memory and cores as one device (one rank per machine; a
// caller running several ranks on it divides them), with no fixed overhead (host memory
// has no context to pay for). Other names are an Error listing these.
DeviceDescription device_preset(const std::string& name);
std::vector<std::string> device_preset_names();
// The GPU preset whose published figures are those of the GPU its driver names
// `device_model` (cudaDeviceProp::name: "NVIDIA H200", "NVIDIA A100-SXM4-80GB", ...); ""
// when none is (another GPU, or a variant whose peak differs, such as the H100 PCIe).
std::string gpu_preset_for(const std::string& device_model);

// Whether llmft has a backend that runs on `device`: the CPU, and GPUs of compute
// capability kMinimumCudaComputeCapability or later (core/cuda_support.h).
bool llmft_runs_on(const DeviceDescription& device);

// This machine's available memory (MemAvailable of /proc/meminfo); 0 when unknown.
size_t available_host_memory();

// The bytes a rank may use: memory_bytes x (1 - margin).
// REQUIRES: 0 <= margin < 1
size_t usable_memory(const DeviceDescription& device, double margin);

}  // namespace llmft
