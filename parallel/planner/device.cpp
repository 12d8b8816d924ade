#include "parallel/planner/device.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/cuda_support.h"
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
// workspace and loaded kernels take before the first allocation: assumed until a run
// measures them.
constexpr double kGpuLatency = 10e-6;
constexpr double kGpuOverheadBytes = 1.0 * kGiB;
// NCCL's own memory per GPU once a communicator has run its collectives, assumed until a
// run measures it: 544-688 MB per communicator on 4 x A100 over NVLink (NVIDIA/nccl#964),
// about 1.6 GB for one communicator on NVSwitch-era GPUs (NVIDIA/nccl#864); it grows with
// the channels NCCL opens to reach a link's bandwidth (NVIDIA/nccl#986), so fewer over
// older NVLink and fewer still over PCIe; groups split with shared resources add little.
constexpr double kNcclNvlink2 = 0.5 * kGiB, kNcclNvlink3 = 0.75 * kGiB;
constexpr double kNcclNvlink4 = 1.5 * kGiB, kNcclPcie = 0.25 * kGiB;
// InfiniBand per GPU: EDR 100 Gb/s (V100 era), HDR 200 Gb/s (A100), NDR 400 Gb/s (H100).
constexpr double kEdr = 12.5 * kGB, kHdr = 25 * kGB, kNdr = 50 * kGB;
// A rough OpenBLAS f32 GEMM rate per core; a calibration measures the real one.
constexpr double kCpuFlopsPerCore = 100e9;
// MPI between processes, through shared memory or the network.
constexpr double kCpuBandwidth = 5 * kGB;
constexpr double kCpuLatency = 5e-6;
// What a few cores' streaming kernels move, assumed (an uncalibrated plan on CPU ranks).
constexpr double kCpuStreamBandwidth = 10 * kGB;

// PCIe x16 per direction, as copies reach it: 3.0 (V100) 12 GB/s, 4.0 (A100, RTX 3090)
// 25 GB/s, 5.0 (H100, H200) 50 GB/s.
constexpr double kPcie3 = 12 * kGB, kPcie4 = 25 * kGB, kPcie5 = 50 * kGB;
// The bytes/s of host memory an offloaded update streams per GPU, assumed: a two-socket
// node's 200-400 GB/s shared by 8 GPUs' processes, less what copies and the OS take.
constexpr double kHostUpdateBandwidth = 20 * kGB;

// cuDNN's fused flash attention runs from Ampere (8.0) on.
constexpr int kCudnnAttentionComputeCapability = 80;

// Published compute capability, memory, dense fp16/bf16 tensor FLOP/s (V100: fp16 only;
// RTX 3090: fp32 accumulate) and per-direction NVLink (or PCIe 4.0 x16) bandwidth, 8 GPUs per node;
// the host memory per GPU of the usual server (DGX-1 512 GB, DGX A100 1-2 TB, DGX H100/H200 2 TB,
// an 8 x RTX 3090 server 256 GB, over 8 GPUs) and its PCIe generation.
DeviceDescription gpu(const std::string& name, int compute_capability, double memory_gib,
                      double tflops, double intra_gb_s, double inter, double host_gib, double pcie,
                      double nccl_bytes) {
  DeviceDescription d;
  d.name = name;
  d.compute_capability = compute_capability;
  d.memory_bytes = static_cast<size_t>(memory_gib * kGiB);
  d.peak_flops = tflops * 1e12;
  d.achieved_fraction = kGpuAchievedFraction;
  d.intra_node = uniform_link(intra_gb_s * kGB, kGpuLatency);
  d.inter_node = uniform_link(inter, kGpuLatency);
  d.gpus_per_node = 8;
  d.overhead_bytes = static_cast<size_t>(kGpuOverheadBytes);
  d.communicator_bytes = static_cast<size_t>(nccl_bytes);
  d.host_memory_bytes = static_cast<size_t>(host_gib * kGiB);
  d.host_link_bandwidth = pcie;
  d.host_update_bandwidth = kHostUpdateBandwidth;
  d.attention_workspace = compute_capability >= kCudnnAttentionComputeCapability
                              ? AttentionWorkspaceRule::cudnn_deterministic
                              : AttentionWorkspaceRule::none;
  return d;
}

// Hopper's kernels at the datasheet's HBM bandwidth: 3.35 TB/s (H100 SXM), 4.8 TB/s (H200).
DeviceDescription hopper(DeviceDescription d, double hbm_tb_s) {
  d.kernel_model = hopper_kernel_model(hbm_tb_s * 1e12);
  return d;
}

std::vector<DeviceDescription> gpu_presets() {
  return {
      gpu("v100-16g", 70, 16, 125, 150, kEdr, 64, kPcie3, kNcclNvlink2),
      gpu("v100-32g", 70, 32, 125, 150, kEdr, 64, kPcie3, kNcclNvlink2),
      gpu("rtx3090", 86, 24, 71, 32, kEdr, 32, kPcie4, kNcclPcie),
      gpu("a100-40g", 80, 40, 312, 300, kHdr, 128, kPcie4, kNcclNvlink3),
      gpu("a100-80g", 80, 80, 312, 300, kHdr, 256, kPcie4, kNcclNvlink3),
      hopper(gpu("h100-80g", 90, 80, 989, 450, kNdr, 256, kPcie5, kNcclNvlink4), 3.35),
      hopper(gpu("h200", 90, 140, 989, 450, kNdr, 256, kPcie5, kNcclNvlink4), 4.8),
  };
}

DeviceDescription this_cpu() {
  DeviceDescription d;
  d.name = "cpu";
  d.memory_bytes =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  d.peak_flops = kCpuFlopsPerCore * std::max(1u, std::thread::hardware_concurrency());
  d.achieved_fraction = kCpuAchievedFraction;
  d.intra_node = uniform_link(kCpuBandwidth, kCpuLatency);
  d.inter_node = d.intra_node;
  d.gpus_per_node = 1;
  d.overlaps_communication = false;
  d.overhead_bytes = 0;
  d.overhead_measured = true;  // nothing to measure: exactly zero
  d.communicator_bytes = 0;    // MPI moves host memory the allocator holds
  d.communicator_measured = true;
  d.compute = ComputeRule::f32;
  // The host pool is this machine's memory too, counted apart from the device's.
  d.host_memory_bytes = available_host_memory();
  d.host_memory_measured = true;
  d.host_update_bandwidth = kCpuStreamBandwidth;  // a calibration prices the tallied kernels
  return d;
}

}  // namespace

const CollectiveRate& Link::rate(Collective op) const {
  switch (op) {
    case Collective::all_reduce:
      return all_reduce;
    case Collective::reduce_scatter:
      return reduce_scatter;
    case Collective::all_gather:
    case Collective::broadcast:
      return all_gather;
  }
  return all_reduce;
}

CollectiveRate& Link::rate(Collective op) {
  return const_cast<CollectiveRate&>(static_cast<const Link&>(*this).rate(op));
}

Link uniform_link(double bandwidth, double latency_s) {
  const CollectiveRate rate{bandwidth, latency_s};
  return Link{rate, rate, rate};
}

size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;  // kB
  }
  return 0;
}

std::vector<std::string> device_preset_names() {
  std::vector<std::string> names;
  for (const DeviceDescription& d : gpu_presets()) names.push_back(d.name);
  names.push_back("cpu");
  return names;
}

std::string gpu_preset_for(const std::string& device_model) {
  const auto has = [&device_model](const char* part) {
    return device_model.find(part) != std::string::npos;
  };
  // The SXM H100's peak; the PCIe and NVL cards run at other clocks and peaks.
  if (has("H200")) return "h200";
  if (has("H100") && (has("SXM") || has("HBM3")) && !has("PCIe") && !has("NVL")) return "h100-80g";
  // A100 PCIe and SXM4 share the dense peak; the name carries the memory.
  if (has("A100")) return has("80GB") ? "a100-80g" : "a100-40g";
  if (has("V100") && has("SXM2")) return has("32GB") ? "v100-32g" : "v100-16g";
  if (has("RTX 3090") && !has("Ti")) return "rtx3090";
  return "";
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

bool llmft_runs_on(const DeviceDescription& device) {
  return device.compute_capability == 0 ||
         device.compute_capability >= kMinimumCudaComputeCapability;
}

size_t usable_memory(const DeviceDescription& device, double margin) {
  return static_cast<size_t>(static_cast<double>(device.memory_bytes) * (1.0 - margin));
}

}  // namespace llmft
