#include "parallel/planner/plan_table.h"

#include <cstdio>
#include <sstream>

#include "core/byte_size.h"
#include "core/cuda_support.h"
#include "parallel/planner/predicted_mfu.h"

namespace llmft {

namespace {

std::string bytes_text(size_t bytes) {
  return format_bytes(static_cast<double>(bytes));
}

std::string devices_line(const PlanRequest& r, const PlanResult& result) {
  const DeviceDescription& d = r.device;
  std::ostringstream os;
  os << "devices: " << r.world << " x " << d.name << ", " << bytes_text(d.memory_bytes) << " each, "
     << bytes_text(result.usable_bytes) << " usable (" << r.memory_margin * 100 << "% margin), "
     << d.gpus_per_node << " per node\n";
  os << "host memory: " << bytes_text(d.host_memory_bytes)
     << " per device for an offloaded optimizer, " << bytes_text(result.usable_host_bytes)
     << " usable, "
     << (d.host_memory_measured ? "this machine's or given" : "assumed from the preset") << "\n";
  if (d.overhead_bytes == 0) {
    os << "fixed overhead: none\n";
  } else {
    os << "fixed overhead: " << bytes_text(d.overhead_bytes)
       << " per device (CUDA context, cuBLAS, kernels), "
       << (d.overhead_measured ? "measured" : "assumed from the preset, not measured") << "\n";
  }
  if (!llmft_runs_on(d)) {
    os << "note: " << d.name << " GPUs (compute capability "
       << compute_capability_text(d.compute_capability)
       << ") cannot run llmft's CUDA backend, which needs "
       << compute_capability_text(kMinimumCudaComputeCapability)
       << " (Ampere) or later: this plan is for comparison\n";
  }
  if (r.world > 1 && d.communicator_bytes > 0) {
    os << "communicator buffers: " << bytes_text(d.communicator_bytes)
       << " per device (NCCL), counted as comm_buffers, "
       << (d.communicator_measured ? "measured" : "assumed from the preset, not measured") << "\n";
  }
  return os.str();
}

// The ranked table's heading and rows, column for column.
std::string heading() {
  char line[160];
  std::snprintf(line, sizeof(line), "%3s %4s %4s %3s %5s %7s   %-5s %4s %12s %12s %9s %9s %14s\n",
                "#", "dp", "tp", "sp", "zero", "micro", "accum", "ckpt", "peak/device",
                "host/device", "step s", "compute s", "exposed comm s");
  return line;
}

std::string row(int rank, const Candidate& c) {
  const Layout& l = c.layout;
  char line[160];
  const std::string checkpointed =
      l.checkpointed_blocks > 0 ? std::to_string(l.checkpointed_blocks) : "off";
  const std::string host = l.offload_optimizer ? bytes_text(c.memory.host_peak) : "-";
  std::snprintf(
      line, sizeof(line), "%3d %4d %4d %3s %5d %7d x %-5d %4s %12s %12s %9.3f %9.3f %14.3f%s\n",
      rank, l.dp, l.tp, l.sequence_parallel ? "on" : "-", l.zero_stage, l.micro_batch, l.grad_accum,
      checkpointed.c_str(), bytes_text(c.memory.peak).c_str(), host.c_str(), c.time.total_s,
      c.time.compute_s, c.time.exposed_comm_s, rank == 1 ? "  <- chosen" : "");
  return line;
}

}  // namespace

std::string plan_table(const PlanRequest& r, const PlanResult& result, int top) {
  std::ostringstream os;
  os << "plan: " << describe_workload(r.workload) << "\n" << devices_line(r, result) << "\n";
  int fitting = 0;
  for (const Candidate& c : result.candidates) fitting += c.fits ? 1 : 0;
  const int rejected = static_cast<int>(result.candidates.size()) - fitting;
  if (fitting == 0) {
    os << "no layout fits\n";
  } else {
    os << heading();
    for (int i = 0; i < fitting && i < top; ++i) os << row(i + 1, result.candidates[i]);
    if (fitting > top) os << "  (" << fitting - top << " more fit; --json lists every layout)\n";
    const Candidate& chosen = result.candidates.front();
    char step[32];
    std::snprintf(step, sizeof(step), "%.3f s", chosen.time.total_s);
    os << "chosen: " << describe_layout(chosen.layout) << ": " << bytes_text(chosen.memory.peak)
       << " per device at its peak (" << chosen.memory.peak_phase << "), " << step << " per step";
    if (chosen.layout.offload_optimizer) {
      os << ", " << bytes_text(chosen.memory.host_peak) << " of host memory per device";
    }
    os << "\n";
    if (const double mfu = predicted_mfu(r, chosen); mfu > 0) {
      char line[96];
      std::snprintf(line, sizeof(line), "predicted MFU %.1f%% of %.4g TFLOP/s per device, from ",
                    mfu * 100, r.device.peak_flops / 1e12);
      os << line << predicted_mfu_basis(r) << "\n" << predicted_mfu_breakdown(r, chosen);
    }
  }
  if (rejected == 0) return os.str();
  os << "\nrejected (" << rejected << ", closest to fitting first):\n";
  for (int i = 0; i < rejected && i < top; ++i) {
    const Candidate& c = result.candidates[fitting + i];
    const Layout& l = c.layout;
    os << "  "
       << (c.evaluated ? describe_layout(l)
                       : "dp " + std::to_string(l.dp) + " x tp " + std::to_string(l.tp))
       << ": " << c.reason << "\n";
  }
  if (rejected > top) os << "  (" << rejected - top << " more; --json lists every layout)\n";
  return os.str();
}

}  // namespace llmft
