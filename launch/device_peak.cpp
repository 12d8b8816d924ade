#include "launch/device_peak.h"

#include "core/error.h"
#include "launch/calibration_cache.h"
#include "launch/plan_options.h"
#include "parallel/planner/device.h"

namespace llmft {

namespace {

DevicePeak gpu_peak(const TrainOptions& o, bool gpu_given, const std::string& device_model) {
  DevicePeak peak;
  const std::string preset = gpu_given ? o.cluster.gpu : gpu_preset_for(device_model);
  if (preset.empty()) {
    peak.why_unknown = "no --gpu preset names the dense peak of this GPU (" +
                       (device_model.empty() ? std::string("unnamed") : device_model) +
                       "); give the closest, e.g. --gpu h100-80g";
  } else if (o.dtype == "fp32") {
    peak.why_unknown = "the --gpu presets hold 16-bit dense peaks and this run computes in fp32";
  } else {
    peak.flops = device_preset(preset).peak_flops;
    peak.name = "the " + preset + " dense " + o.dtype + " peak" +
                (gpu_given ? "" : " (found for " + device_model + ")");
  }
  return peak;
}

DevicePeak cpu_peak(int world_size, int threads) {
  DevicePeak peak;
  const std::string path = default_calibration_path();
  try {
    const std::optional<Calibration> calibration = read_calibration(
        path, calibration_key(this_host(), "cpu", DType::f32, world_size, threads));
    if (calibration && calibration->gemm_flops > 0) {
      peak.flops = calibration->gemm_flops;
      peak.name = "the calibrated GEMM rate";
      return peak;
    }
    peak.why_unknown = "no calibrated GEMM rate for " + std::to_string(world_size) + " ranks of " +
                       std::to_string(threads) + " threads on this host in " + path +
                       " (a run with --auto-plan measures one)";
  } catch (const Error& e) {
    peak.why_unknown = e.what();
  }
  return peak;
}

}  // namespace

DevicePeak device_peak(const TrainOptions& o, int world_size, bool gpu_given,
                       const std::string& device_model) {
  return o.device == "cpu" ? cpu_peak(world_size, o.threads) : gpu_peak(o, gpu_given, device_model);
}

}  // namespace llmft
