#include "parallel/planner/device.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace llmft {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;

// Training steps reach 33-55% of the 16-bit peak on GPUs (Megatron-LM 41-49% on H100,
// llm.c 44-55%, torchtitan 33-39%). On CPU a
// step of gpt2 (124M) reaches 59-72% of the same run's large-GEMM rate
// (bench/train_step.sh), and calibration measures that rate and the small-GEMM penalty.
constexpr double kGpuAchievedFraction = 0.5;
constexpr double kCpuAchievedFraction = 0.7;
// An NCCL collective's latency per ring step, and the memory the CUDA context, cuBLAS
// workspace and NCCL communicators take before the first allocation: assumed until a
// run measures them.
constexpr double kGpuLatency = 10e-6;
constexpr double kGpuOverheadBytes = 1.0 * kGiB;
// InfiniBand per GPU: EDR 100 Gb/s (V100 era), HDR 200 Gb/s (A100), NDR 400 Gb/s (H100).
constexpr double kEdr = 12.5 * kGB, kHdr = 25 * kGB, kNdr = 50 * kGB;
// A rough OpenBLAS f32 GEMM rate per core; a calibration measures the real one.
constexpr double kCpuFlopsPerCore = 100e9;
// MPI between processes, through shared memory or the network.
constexpr double kCpuBandwidth = 5 * kGB;
constexpr double kCpuLatency = 5e-6;

// Published memory, dense fp16/bf16 tensor FLOP/s (V100: fp16 only; RTX 3090: fp32
// accumulate) and per-direction NVLink (or PCIe 4.0 x16) bandwidth, 8 GPUs per node.
DeviceDescription gpu(const std::string& name, double memory_gib, double tflops, double intra_gb_s,
                      double inter) {
  DeviceDescription d;
  d.name = name;
  d.memory_bytes = static_cast<size_t>(memory_gib * kGiB);
  d.peak_flops = tflops * 1e12;
  d.achieved_fraction = kGpuAchievedFraction;
  d.intra_node = Link{intra_gb_s * kGB, kGpuLatency};
  d.inter_node = Link{inter, kGpuLatency};
  d.gpus_per_node = 8;
  d.overhead_bytes = static_cast<size_t>(kGpuOverheadBytes);
  return d;
}

std::vector<DeviceDescription> gpu_presets() {
  return {
      gpu("v100-16g", 16, 125, 150, kEdr), gpu("v100-32g", 32, 125, 150, kEdr),
      gpu("rtx3090", 24, 71, 32, kEdr),    gpu("a100-40g", 40, 312, 300, kHdr),
      gpu("a100-80g", 80, 312, 300, kHdr), gpu("h100-80g", 80, 989, 450, kNdr),
      gpu("h200", 140, 989, 450, kNdr),
  };
}

DeviceDescription this_cpu() {
  DeviceDescription d;
  d.name = "cpu";
  d.memory_bytes =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  d.peak_flops = kCpuFlopsPerCore * std::max(1u, std::thread::hardware_concurrency());
  d.achieved_fraction = kCpuAchievedFraction;
  d.intra_node = Link{kCpuBandwidth, kCpuLatency};
  d.inter_node = d.intra_node;
  d.gpus_per_node = 1;
  d.overlaps_communication = false;
  d.overhead_bytes = 0;
  d.overhead_measured = true;  // nothing to measure: exactly zero
  d.compute = ComputeRule::f32;
  return d;
}

}  // namespace

std::vector<std::string> device_preset_names() {
  std::vector<std::string> names;
  for (const DeviceDescription& d : gpu_presets()) names.push_back(d.name);
  names.push_back("cpu");
  return names;
}

DeviceDescription device_preset(const std::string& name) {
  if (name == "cpu") return this_cpu();
  for (const DeviceDescription& d : gpu_presets()) {
    if (d.name == name) return d;
  }
  std::ostringstream known;
  for (const std::string& n : device_preset_names()) known << " " << n;
  LLMFT_FAIL("--gpu " << name << ": unknown device; presets:" << known.str());
}

size_t usable_memory(const DeviceDescription& device, double margin) {
  return static_cast<size_t>(static_cast<double>(device.memory_bytes) * (1.0 - margin));
}

}  // namespace llmft
