#include "parallel/planner/predicted_mfu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "parallel/flops.h"

namespace llmft {

double predicted_mfu(const PlanRequest& request, const Candidate& candidate) {
  if (!candidate.evaluated || candidate.time.total_s <= 0 || request.device.peak_flops <= 0) {
    return 0;
  }
  const Workload& w = request.workload;
  const double tokens = static_cast<double>(w.global_batch) * w.seq_len;
  return step_throughput(tokens, candidate.time.total_s,
                         training_flops_per_token(w.model, w.seq_len), candidate.layout.world(),
                         request.device.peak_flops)
      .mfu;
}

std::string predicted_mfu_basis(const PlanRequest& request) {
  const DeviceDescription& d = request.device;
  // A calibration measures the streaming kernels' rate; presets leave it 0.
  if (d.memory_bandwidth > 0) return "the rates this job's calibration measured";
  if (gpu_kernel_model_applies(d.kernel_model, request.workload.dtype)) {
    return "the " + d.name +
           " preset's per-kernel GPU time model (published cuBLAS, cuDNN and HBM rates: "
           "docs/GPU_TIME_MODEL.md)";
  }
  return "the " + d.name + " preset, which prices a step's matrix products at " +
         std::to_string(static_cast<int>(std::lround(d.achieved_fraction * 100))) +
         "% of its peak (an assumption, not a per-kernel model)";
}

namespace {

struct ClassLine {
  std::string name;
  double seconds;
  std::string rate;
};

std::string flops_rate(double flops, double seconds, double peak) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f TFLOP/s, %.0f%% of peak", flops / seconds / 1e12,
                100 * flops / seconds / peak);
  return text;
}

}  // namespace

std::string predicted_mfu_breakdown(const PlanRequest& request, const Candidate& candidate) {
  const StepTime& t = candidate.time;
  const KernelSeconds& k = t.kernels;
  if (!candidate.evaluated || k.total() <= 0 || t.total_s <= 0) return "";
  const double peak = request.device.peak_flops;
  std::vector<ClassLine> lines;
  if (k.products > 0) {
    lines.push_back({"matrix products", k.products, flops_rate(k.product_flops, k.products, peak)});
  }
  if (k.attention_forward > 0) {
    lines.push_back({"attention forward", k.attention_forward,
                     flops_rate(k.attention_forward_flops, k.attention_forward, peak)});
  }
  if (k.attention_backward > 0) {
    lines.push_back({"attention backward", k.attention_backward,
                     flops_rate(k.attention_backward_flops, k.attention_backward, peak)});
  }
  char bandwidth[64];
  std::snprintf(bandwidth, sizeof(bandwidth), "bytes at %.2f TB/s",
                request.device.kernel_model.memory_bandwidth / 1e12);
  for (int kind = 0; kind < kKernelKinds; ++kind) {
    if (k.memory_bound[kind] > 0) {
      lines.push_back(
          {kernel_kind_name(static_cast<KernelKind>(kind)), k.memory_bound[kind], bandwidth});
    }
  }
  lines.push_back({"kernel gaps", k.gaps, "a fixed gap per kernel call"});
  if (t.exposed_comm_s > 0) {
    lines.push_back({"exposed communication", t.exposed_comm_s, "collectives per link"});
  }
  if (t.host_s > 0) lines.push_back({"offloaded optimizer", t.host_s, "host and PCIe"});
  std::stable_sort(lines.begin(), lines.end(),
                   [](const ClassLine& a, const ClassLine& b) { return a.seconds > b.seconds; });
  std::string text = "where the chosen step's time goes (what holds the MFU back):\n";
  for (const ClassLine& line : lines) {
    char row[160];
    std::snprintf(row, sizeof(row), "  %-28s %9.4f s %5.1f%%  %s\n", line.name.c_str(),
                  line.seconds, 100 * line.seconds / t.total_s, line.rate.c_str());
    text += row;
  }
  return text;
}

}  // namespace llmft
