// The calibration cache: entries keyed by host and world survive each other's writes,
// measured figures replace the preset's, and a damaged file is an error naming it.
#include <doctest/doctest.h>

#include "core/error.h"
#include "launch/calibration_cache.h"

#include "tests/support/temp_dir.h"

using namespace llmft;

TEST_CASE("calibration cache: write, read back, keep other entries") {
  testing::TempDir dir;
  const std::string path = dir.file("cache/calibration.json");  // the directory is created
  CHECK(calibration_key("node07", "h100-80g", DType::bf16, 16, 4) == "node07/h100-80g/bf16/16/4");
  CHECK_FALSE(read_calibration(path, "node07/h100-80g/bf16/16/0").has_value());

  const Link nvlink{{3.6e11, 1.2e-5}, {3.1e11, 0.9e-5}, {3.3e11, 1.0e-5}};
  const Link infiniband{{4.4e10, 2.5e-5}, {4.1e10, 2.2e-5}, {4.2e10, 2.3e-5}};
  Calibration one_node{"h100-80g", 6.1e14, 48, nvlink, Link{}};
  Calibration two_nodes{"h100-80g", 6.0e14, 48, nvlink, infiniband};
  one_node.gemm_size = two_nodes.gemm_size = 8192;
  record_conditions(one_node);
  write_calibration(path, calibration_key("node07", "h100-80g", DType::bf16, 8, 0), one_node);
  write_calibration(path, calibration_key("node07", "h100-80g", DType::bf16, 16, 0), two_nodes);
  const std::optional<Calibration> a = read_calibration(path, "node07/h100-80g/bf16/8/0");
  const std::optional<Calibration> b = read_calibration(path, "node07/h100-80g/bf16/16/0");
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->device == "h100-80g");
  CHECK(a->gemm_flops == 6.1e14);
  CHECK(a->gemm_half_rate_rows == 48);
  // The probe's shape and when and under what load it was measured come back as written.
  CHECK(a->gemm_size == 8192);
  CHECK(a->measured_at == one_node.measured_at);
  CHECK(a->measured_at.size() == std::string("2026-12-03T17:05:00Z").size());
  CHECK(a->load_average == one_node.load_average);
  CHECK(a->online_cpus >= 1);
  // Each collective's rate comes back as written, none standing in for another.
  for (const Collective op : kLinkCollectives) {
    CAPTURE(std::string(collective_name(op)));
    CHECK(a->intra_node.rate(op).bandwidth == nvlink.rate(op).bandwidth);
    CHECK(a->intra_node.rate(op).latency_s == nvlink.rate(op).latency_s);
    CHECK(b->inter_node.rate(op).bandwidth == infiniband.rate(op).bandwidth);
    CHECK(b->inter_node.rate(op).latency_s == infiniband.rate(op).latency_s);
  }
  CHECK_FALSE(a->inter_node.known());
  CHECK_FALSE(read_calibration(path, "node08/h100-80g/bf16/8/0").has_value());
  // A CPU job of the same host and world measures its own.
  CHECK_FALSE(read_calibration(path, calibration_key("node07", "cpu", DType::f32, 8, 0)));
}

TEST_CASE("calibration replaces the preset's figures with the measured ones") {
  const DeviceDescription preset = device_preset("a100-80g");
  const Link measured{{2.0e11, 2e-5}, {1.5e11, 3e-5}, {1.7e11, 4e-5}};
  const Calibration c{"a100-80g", 2.5e14, 96, measured, Link{}};
  const DeviceDescription d = calibrated(preset, c);
  CHECK(d.peak_flops == 2.5e14);
  CHECK(d.gemm_half_rate_rows == 96);
  CHECK(d.achieved_fraction == preset.achieved_fraction);
  CHECK(d.intra_node.all_reduce.bandwidth == 2.0e11);
  CHECK(d.intra_node.reduce_scatter.latency_s == 3e-5);
  CHECK(d.intra_node.all_gather.bandwidth == 1.7e11);
  CHECK(d.intra_node.rate(Collective::broadcast).bandwidth == 1.7e11);  // priced as all-gather
  CHECK(d.inter_node.all_reduce.bandwidth ==
        preset.inter_node.all_reduce.bandwidth);  // not measured
  CHECK(d.memory_bytes == preset.memory_bytes);
}

TEST_CASE(
    "a damaged calibration cache is an error naming the file; another version is remeasured") {
  testing::TempDir dir;
  const std::string path =
      dir.write("calibration.json", "{\"version\": 1, \"entries\": {\"x/1/0\": {}}}");
  CHECK_FALSE(read_calibration(path, "x/1/0").has_value());
  dir.write("calibration.json", "{\"entries\": {}}");
  CHECK_THROWS_WITH_AS(read_calibration(path, "x/1/0"),
                       doctest::Contains(("calibration cache " + path).c_str()), Error);
  dir.write("calibration.json", R"({"version": 6, "entries": {"x/1/0": {"device": "cpu",
      "gemm_flops": 6e10, "gemm_half_rate_rows": 8, "memory_bandwidth": 8e9,
      "kernel_call_s": 1e-6, "gemm_size": 0, "measured_at": "", "load_average": 0,
      "online_cpus": 2}}})");
  CHECK_THROWS_WITH_AS(read_calibration(path, "x/1/0"),
                       doctest::Contains("gemm_size must be positive"), Error);
  dir.write("calibration.json", "not json");
  CHECK_THROWS_WITH_AS(read_calibration(path, "x/1"),
                       doctest::Contains("delete the file to measure again"), Error);
}

TEST_CASE("device presets") {
  for (const std::string& name : device_preset_names()) {
    const DeviceDescription d = device_preset(name);
    CHECK(d.name == name);
    CHECK(d.memory_bytes > 0);
    CHECK(d.peak_flops > 0);
    CHECK(d.intra_node.known());
    CHECK(d.inter_node.known());
    // Published figures are per connection: every collective gets the same.
    CHECK(d.intra_node.reduce_scatter.bandwidth == d.intra_node.all_reduce.bandwidth);
    CHECK(d.inter_node.all_gather.latency_s == d.inter_node.all_reduce.latency_s);
    CHECK((name == "cpu") == (d.overhead_bytes == 0));
  }
  CHECK(device_preset("rtx3090").memory_bytes == 24ULL << 30);
  CHECK(static_cast<double>(usable_memory(device_preset("rtx3090"), 0.05)) ==
        doctest::Approx(0.95 * static_cast<double>(24ULL << 30)));
  CHECK_THROWS_WITH_AS(device_preset("tpu-v4"), doctest::Contains("rtx3090"), Error);
}
