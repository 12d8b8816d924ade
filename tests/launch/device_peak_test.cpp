// The peak MFU is measured against (launch/device_peak.h): a named --gpu preset's
// published dense 16-bit peak (989 TFLOP/s for the H100, NVIDIA's datasheet), none for
// fp32 or an unnamed GPU, and on CPU ranks the cache's GEMM rate for this host, world and
// threads, or none saying where it looked. The figures are copied, so checks are exact.
#include <doctest/doctest.h>

#include <cstdlib>

#include "launch/calibration_cache.h"
#include "launch/device_peak.h"

#include "tests/support/temp_dir.h"

using namespace llmft;

TEST_CASE("device peak: the named GPU preset's dense 16-bit peak, or why none") {
  TrainOptions o;
  o.device = "cuda";
  o.dtype = "bf16";
  o.cluster.gpu = "h100-80g";
  const DevicePeak named = device_peak(o, 8, true);
  CHECK(named.flops == 989e12);
  CHECK(named.name == "the h100-80g dense bf16 peak");
  const DevicePeak unnamed = device_peak(o, 8, false);
  CHECK(unnamed.flops == 0);
  CHECK(unnamed.why_unknown.find("--gpu") != std::string::npos);
  o.dtype = "fp32";
  const DevicePeak f32 = device_peak(o, 8, true);
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
  const DevicePeak none = device_peak(o, 2, false);
  CHECK(none.flops == 0);
  CHECK(none.why_unknown.find(path) != std::string::npos);
  Calibration measured;
  measured.device = "cpu";
  measured.gemm_flops = 4.5e10;
  measured.gemm_size = 1024;
  record_conditions(measured);
  write_calibration(path, calibration_key(this_host(), "cpu", DType::f32, 2, 1), measured);
  const DevicePeak calibrated = device_peak(o, 2, false);
  INFO(calibrated.why_unknown);
  CHECK(calibrated.flops == 4.5e10);
  CHECK(calibrated.name == "the calibrated GEMM rate");
  CHECK(device_peak(o, 4, false).flops == 0);  // another world size: another entry
  if (before) {
    ::setenv("LLMFT_CALIBRATION_CACHE", saved.c_str(), 1);
  } else {
    ::unsetenv("LLMFT_CALIBRATION_CACHE");
  }
}
