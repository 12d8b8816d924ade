// The GPU time model (parallel/planner/gpu_kernel_model.h, gpu_kernel_time.h): its
// arithmetic on small cases computed by hand, its GEMM curve against the published cuBLAS
// measurements it stands for, its limits (never above the large-GEMM share, flat beyond
// the attention tables), and on a whole TinyLlama step that the kernels it prices are the
// step's compute, faster memory never makes a step slower, and the plan's breakdown adds
// up to the step. Everything here is double arithmetic on formulas, the same on every
// machine: a plain Approx absorbs only the rounding of a few operations.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "parallel/flops.h"
#include "parallel/planner/device.h"
#include "parallel/planner/gpu_kernel_time.h"
#include "parallel/planner/predicted_mfu.h"
#include "parallel/planner/step_time.h"
#include "parallel/planner/step_work.h"

using namespace llmft;

namespace {

const GpuKernelModel& h200() {
  static const GpuKernelModel model = device_preset("h200").kernel_model;
  return model;
}

Workload tinyllama() {
  Workload w;
  w.model = preset_config("tinyllama-1.1b");
  w.dtype = DType::bf16;
  w.seq_len = 2048;
  w.global_batch = 8;
  return w;
}

}  // namespace

TEST_CASE("GEMM efficiency by hand: tiles over 132 SMs in waves, and the main loop") {
  // 4096^3: 32 x 16 tiles of 128 x 256 = 512 tiles, 4 waves of 132 (528 slots);
  // K / (K + 256).
  CHECK(gemm_efficiency(h200(), 4096, 4096, 4096) ==
        doctest::Approx(0.84 * 512.0 / 528 * 4096.0 / 4352));
  // One tile on one SM of 132.
  CHECK(gemm_efficiency(h200(), 1, 1, 1) == doctest::Approx(0.84 / 132 / 257));
  // 100 full waves and a long K approach the large-GEMM share (K / (K + 256) > 0.9997).
  CHECK(gemm_efficiency(h200(), 132 * 128 * 100, 256, int64_t{1} << 20) ==
        doctest::Approx(0.84).epsilon(3e-4));
}

TEST_CASE("GEMM efficiency: the published cuBLAS bf16 squares on an H100, within 10%") {
  // torch.matmul (cuBLAS) on an H100 80GB HBM3, bf16, M = N = K (docs/GPU_TIME_MODEL.md).
  // 10%: a three-figure curve (share, tile, K half) against four measurements that carry
  // their own run-to-run spread; the model errs by -9% to +6% at these points.
  const std::pair<int64_t, double> measured[] = {
      {1024, 176.62e12}, {2048, 676.59e12}, {4096, 788.72e12}, {8192, 797.51e12}};
  for (const auto& [size, flops] : measured) {
    CAPTURE(size);
    CHECK(gemm_efficiency(h200(), size, size, size) * 989e12 ==
          doctest::Approx(flops).epsilon(0.10));
  }
}

TEST_CASE("GEMM efficiency: never above the large-GEMM share, and a longer K never lowers it") {
  for (const int64_t m : {1, 100, 128, 2048, 16384}) {
    for (const int64_t n : {1, 256, 2560, 32000}) {
      double previous = 0;
      for (const int64_t k : {1, 64, 2048, 16384}) {
        const double e = gemm_efficiency(h200(), m, n, k);
        CHECK(e > 0);
        CHECK(e <= 0.84);
        CHECK(e >= previous);
        previous = e;
      }
    }
  }
}

TEST_CASE("attention rates: table points, log2 interpolation, flat ends, thin heads") {
  // Head size 64 at 2048, forward: 395 TFLOP/s unmasked x the causal factor 334 / 395.
  CHECK(attention_flops_per_s(h200(), 64, 2048, false) == doctest::Approx(334e12));
  CHECK(attention_flops_per_s(h200(), 64, 2048, true) == doctest::Approx(395e12 * 334 / 395));
  // Head size 128 at 16384, backward: 516 x 388 / 413.
  CHECK(attention_flops_per_s(h200(), 128, 16384, true) == doctest::Approx(516e12 * 388 / 413));
  // Beyond the tables: flat.
  CHECK(attention_flops_per_s(h200(), 128, 1 << 20, true) ==
        attention_flops_per_s(h200(), 128, 16384, true));
  CHECK(attention_flops_per_s(h200(), 64, 16, false) ==
        attention_flops_per_s(h200(), 64, 512, false));
  // Head size 32 takes the 64 table at half its rate.
  CHECK(attention_flops_per_s(h200(), 32, 2048, false) ==
        doctest::Approx(attention_flops_per_s(h200(), 64, 2048, false) / 2));
  // Halfway in log2 between two points, halfway in value.
  const LengthCurve curve{{1024, 1.0}, {4096, 3.0}};
  CHECK(curve_at(curve, 2048) == doctest::Approx(2.0));
  CHECK(curve_at(curve, 1024) == 1.0);
  CHECK(curve_at(curve, 8192) == 3.0);
}

TEST_CASE("a tally priced by hand: one GEMM, one attention forward, one memory-bound kernel") {
  WorkTally t;
  t.add_gemm(4096, {4096, 4096, 4096});
  t.add_attention({1, 2048, 32, 4, 64, false});
  t.add_kernel(KernelKind::norm, 1e9);
  const KernelSeconds s = gpu_kernel_seconds(t, h200(), 989e12, AttentionWorkspaceRule::none);
  const double gemm_flops = 2.0 * 4096 * 4096 * 4096;
  CHECK(s.product_flops == gemm_flops);
  CHECK(s.products == doctest::Approx(gemm_flops / (989e12 * 0.84 * 512.0 / 528 * 4096.0 / 4352)));
  // 4 x batch x heads x T^2 x head_dim, halved by the mask, at 334 TFLOP/s.
  const double attention_flops = 2.0 * 32 * 2048.0 * 2048 * 64;
  CHECK(s.attention_forward_flops == attention_flops);
  CHECK(s.attention_forward == doctest::Approx(attention_flops / 334e12));
  CHECK(s.attention_backward == 0);
  // 1 GB at 90% of the H200's 4.8 TB/s.
  CHECK(s.memory_bound[static_cast<int>(KernelKind::norm)] == doctest::Approx(1e9 / 4.32e12));
  CHECK(s.gaps == doctest::Approx(3 * 2e-6));  // three kernel calls
  CHECK(s.total() == doctest::Approx(s.products + s.attention_forward + 1e9 / 4.32e12 + 6e-6));
}

TEST_CASE("cuDNN's deterministic backward adds its dQ pass to the fused kernel's four products") {
  WorkTally t;
  t.add_attention({1, 2048, 32, 4, 64, true});
  // The backward's count, 2.5 times the forward's; the fused kernel at the published 334
  // TFLOP/s without the dQ pass's fifth, which runs at 140.
  const double flops = 2.5 * 2.0 * 32 * 2048.0 * 2048 * 64;
  const auto seconds = [&](AttentionWorkspaceRule rule) {
    const KernelSeconds s = gpu_kernel_seconds(t, h200(), 989e12, rule);
    CHECK(s.attention_backward_flops == flops);
    return s.attention_backward;
  };
  CHECK(seconds(AttentionWorkspaceRule::cudnn_nondeterministic) == doctest::Approx(flops / 334e12));
  CHECK(seconds(AttentionWorkspaceRule::none) ==
        seconds(AttentionWorkspaceRule::cudnn_nondeterministic));
  CHECK(seconds(AttentionWorkspaceRule::cudnn_deterministic) ==
        doctest::Approx(0.8 * flops / 334e12 + 0.2 * flops / 140e12));
}

TEST_CASE("the counting device's GEMM shapes carry the step's product FLOPs") {
  const Workload w = tinyllama();
  const StepWork work = step_work(w, Layout{1, 1, 0, 1, 1, false}, ComputeRule::stored);
  double flops = 0;
  for (const auto& [shape, calls] : work.micro_batch.gemm_calls) {
    const auto [m, n, k] = shape;
    flops += 2.0 * calls * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  // Integers below 2^53: exact in double.
  CHECK(flops == work.micro_batch.total_gemm_flops());
}

TEST_CASE("TinyLlama on an h200: the priced kernels are the step's compute, below the peak") {
  const Workload w = tinyllama();
  const Layout l{1, 1, 0, 8, 1, false};
  const StepTime t = predict_step_time(w, l, device_preset("h200"));
  CHECK(t.kernels.total() == doctest::Approx(t.compute_s));
  CHECK(t.kernels.products > 0);
  CHECK(t.kernels.attention_forward > 0);
  CHECK(t.kernels.attention_backward > t.kernels.attention_forward);
  // The model FLOPs cannot run faster than the peak, nor the products' own FLOPs.
  const double model_flops = training_flops_per_token(w.model, w.seq_len) * 8 * 2048;
  CHECK(t.total_s > model_flops / 989e12);
  CHECK(t.kernels.products > t.kernels.product_flops / 989e12);
  // Faster HBM (the H200's 4.8 TB/s against the H100's 3.35) never makes the step slower,
  // and speeds up only the memory-bound kernels.
  const StepTime h100 = predict_step_time(w, l, device_preset("h100-80g"));
  CHECK(t.total_s < h100.total_s);
  CHECK(t.kernels.products == h100.kernels.products);
  // Another dtype than 16 bits keeps the preset's whole-step assumption.
  Workload f32 = w;
  f32.dtype = DType::f32;
  CHECK(predict_step_time(f32, l, device_preset("h200")).kernels.total() == 0);
}

TEST_CASE("the plan's breakdown: every class of the step once, adding up to the step") {
  PlanRequest r;
  r.workload = tinyllama();
  r.device = device_preset("h200");
  const PlanResult result = plan_layouts(r);
  const Candidate& chosen = chosen_layout(r, result);
  const std::string breakdown = predicted_mfu_breakdown(r, chosen);
  std::istringstream lines(breakdown);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "where the chosen step's time goes (what holds the MFU back):");
  double seconds = 0;
  int classes = 0;
  while (std::getline(lines, line)) {
    const size_t unit = line.find(" s ");
    REQUIRE(unit != std::string::npos);
    seconds += std::stod(line.substr(30, unit - 30));  // after "  " and a 28-wide name
    ++classes;
  }
  // Products, attention forward and backward, the 9 memory-bound kinds and the gaps; one
  // GPU: no communication, no offloaded optimizer.
  CHECK(classes == 13);
  // Each printed to 0.1 ms, rounded: 13 half-units at most.
  CHECK(std::abs(seconds - chosen.time.total_s) <= 13 * 5e-5);
  // A preset without published kernel rates has no breakdown.
  r.device = device_preset("a100-80g");
  CHECK(predicted_mfu_breakdown(r, chosen_layout(r, plan_layouts(r))).empty());
}
