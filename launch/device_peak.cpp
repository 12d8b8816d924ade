#include "launch/device_peak.h"

#include "core/error.h"
#include "launch/calibration_cache.h"
#include "launch/plan_options.h"

namespace llmft {

namespace {

DevicePeak gpu_peak(const TrainOptions& o, bool gpu_given) {
  DevicePeak peak;
  if (!gpu_given) {
    peak.why_unknown = "no --gpu preset names this GPU's dense peak (e.g. --gpu h100-80g)";
  } else if (o.dtype == "fp32") {
    peak.why_unknown = "the --gpu presets hold 16-bit dense peaks and this run computes in fp32";
  } else {
    peak.flops = describe_device(o.cluster).peak_flops;
    peak.name = "the " + o.cluster.gpu + " dense " + o.dtype + " peak";
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

DevicePeak device_peak(const TrainOptions& o, int world_size, bool gpu_given) {
  return o.device == "cpu" ? cpu_peak(world_size, o.threads) : gpu_peak(o, gpu_given);
}

}  // namespace llmft
