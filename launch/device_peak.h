// The peak FLOP/s per device a training run's MFU is measured against: on GPUs the dense
// 16-bit peak of the --gpu preset, or without --gpu of the preset of the GPU the run has, on CPU
// ranks the GEMM rate a calibration measured on this host for this world size and thread count
// (launch/calibration_cache.h); each named so in the reports, or unknown with the reason and the
// fix.
#pragma once

#include <string>

#include "launch/train_options.h"

namespace llmft {

struct DevicePeak {
  double flops = 0;         // per device; 0: unknown
  std::string name;         // what the peak is, e.g. "the calibrated GEMM rate"
  std::string why_unknown;  // when flops is 0: why, and what would give one
};

// `gpu_given`: whether --gpu was given (its default preset is no statement about the GPU
// the run has); `device_model`: the GPU's name as the backend reports it (Backend::
// device_model), matched to a preset when --gpu is not given. Reads the calibration cache
// on CPU ranks; a cache it cannot read leaves the peak unknown, saying why.
DevicePeak device_peak(const TrainOptions& o, int world_size, bool gpu_given,
                       const std::string& device_model);

}  // namespace llmft
