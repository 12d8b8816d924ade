// The peak MFU is measured against (launch/device_peak.h): a named --gpu preset's
// published dense 16-bit peak (989 TFLOP/s for the H100, NVIDIA's datasheet), without
// --gpu the preset of the GPU the driver names (the names are those cudaDeviceProp::name
// gives on these GPUs), none for fp32 or a GPU no preset describes, and on CPU ranks the cache's
// GEMM rate for this host, world and threads, or none saying where it looked. The figures are
// copied, so checks are exact.
#include <doctest/doctest.h>

#include <cstdlib>

#include "launch/calibration_cache.h"
#include "launch/device_peak.h"
#include "parallel/planner/device.h"

#include "tests/support/temp_dir.h"

using namespace llmft;

TEST_CASE("device peak: the named GPU preset's dense 16-bit peak, or why none") {
  TrainOptions o;
  o.device = "cuda";
  o.dtype = "bf16";
  o.cluster.gpu = "h100-80g";
  const DevicePeak named = device_peak(o, 8, true, "NVIDIA A100-SXM4-80GB");
  CHECK(named.flops == 989e12);  // --gpu wins over the device's name
  CHECK(named.name == "the h100-80g dense bf16 peak");
  const DevicePeak found = device_peak(o, 8, false, "NVIDIA H200");
  CHECK(found.flops == 989e12);
  CHECK(found.name == "the h200 dense bf16 peak (found for NVIDIA H200)");
  const DevicePeak unknown = device_peak(o, 8, false, "NVIDIA H100 PCIe");
  CHECK(unknown.flops == 0);
  CHECK(unknown.why_unknown.find("NVIDIA H100 PCIe") != std::string::npos);
  CHECK(unknown.why_unknown.find("--gpu") != std::string::npos);
  o.dtype = "fp32";
  const DevicePeak f32 = device_peak(o, 8, true, "");
  CHECK(f32.flops == 0);
  CHECK(f32.why_unknown.find("fp32") != std::string::npos);
}

TEST_CASE("device peak: the calibrated GEMM rate of this host, world and threads on CPU") {
  testing::TempDir dir;
  const std::string path = dir.file("calibration.json");
  const char* before = std::getenv("LLMFT_CALIBRATION_CACHE");
  const std::string saved = before ? before : "";
  ::setenv("LLMFT_CALIBRATION_CACHE", path.c_str(), 1);
  TrainOptions o;
  o.device = "cpu";
  o.threads = 1;
  const DevicePeak none = device_peak(o, 2, false, "");
  CHECK(none.flops == 0);
  CHECK(none.why_unknown.find(path) != std::string::npos);
  Calibration measured;
  measured.device = "cpu";
  measured.gemm_flops = 4.5e10;
  measured.gemm_size = 1024;
  record_conditions(measured);
  write_calibration(path, calibration_key(this_host(), "cpu", DType::f32, 2, 1), measured);
  const DevicePeak calibrated = device_peak(o, 2, false, "");
  INFO(calibrated.why_unknown);
  CHECK(calibrated.flops == 4.5e10);
  CHECK(calibrated.name == "the calibrated GEMM rate");
  CHECK(device_peak(o, 4, false, "").flops == 0);  // another world size: another entry
  if (before) {
    ::setenv("LLMFT_CALIBRATION_CACHE", saved.c_str(), 1);
  } else {
    ::unsetenv("LLMFT_CALIBRATION_CACHE");
  }
}

TEST_CASE("GPU names map to the presets with their published peaks, other variants to none") {
  CHECK(gpu_preset_for("NVIDIA H200") == "h200");
  CHECK(gpu_preset_for("NVIDIA H100 80GB HBM3") == "h100-80g");
  CHECK(gpu_preset_for("NVIDIA H100 PCIe").empty());
  CHECK(gpu_preset_for("NVIDIA H100 NVL").empty());
  CHECK(gpu_preset_for("NVIDIA A100-SXM4-80GB") == "a100-80g");
  CHECK(gpu_preset_for("NVIDIA A100 80GB PCIe") == "a100-80g");
  CHECK(gpu_preset_for("NVIDIA A100-SXM4-40GB") == "a100-40g");
  CHECK(gpu_preset_for("NVIDIA A100-PCIE-40GB") == "a100-40g");
  CHECK(gpu_preset_for("Tesla V100-SXM2-32GB") == "v100-32g");
  CHECK(gpu_preset_for("Tesla V100-SXM2-16GB") == "v100-16g");
  CHECK(gpu_preset_for("Tesla V100-PCIE-16GB").empty());
  CHECK(gpu_preset_for("NVIDIA GeForce RTX 3090") == "rtx3090");
  CHECK(gpu_preset_for("NVIDIA GeForce RTX 3090 Ti").empty());
  CHECK(gpu_preset_for("").empty());
}
