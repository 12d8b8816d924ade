#include "parallel/planner/device_benchmark.h"

#include <algorithm>
#include <chrono>

#include "comm/host_reduce.h"

namespace llmft {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The largest of a host value over the group (itself without one).
double group_max(Backend& backend, Allocator& allocator, Communicator* group, double value) {
  if (!group) return value;
  Buffer buf = allocator.allocate(sizeof(float), MemoryCategory::comm_buffers, "benchmark value");
  return reduce_host_value(*group, backend, buf.as(DType::f32, {1}), value, ReduceOp::max);
}

// Seconds of `repeats` (rows x 1024) @ (1024 x 1024)^T GEMMs on the slowest rank.
double gemm_seconds(Backend& backend, Allocator& allocator, Communicator* world, int64_t rows,
                    int repeats) {
  constexpr int64_t kSize = 1024;
  auto take = [&](int64_t elements, const char* what) {
    Buffer b = allocator.allocate(elements * sizeof(float), MemoryCategory::workspace, what);
    backend.fill(b.as(DType::f32, {elements}), 0.01f);
    return b;
  };
  Buffer a = take(rows * kSize, "benchmark input"), w = take(kSize * kSize, "benchmark weight");
  Buffer out = take(rows * kSize, "benchmark output");
  auto gemm = [&] {
    backend.linear_forward(out.as(DType::f32, {rows, kSize}), a.as(DType::f32, {rows, kSize}),
                           w.as(DType::f32, {kSize, kSize}), Tensor());
  };
  gemm();  // warm-up
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) gemm();
  backend.synchronize();
  return group_max(backend, allocator, world, seconds_since(start));
}

// The large-GEMM rate and the row count at which a GEMM runs at half of it, from the
// rates of 1024-row and 64-row GEMMs under the model rate(r) = peak x r / (r + half).
void measure_gemm(Backend& backend, Allocator& allocator, Communicator* world, Calibration& c) {
  constexpr double kLarge = 1024, kSmall = 64;
  const double flops_per_row = 2.0 * 1024 * 1024;
  const double large =
      kLarge * flops_per_row * 3 / gemm_seconds(backend, allocator, world, 1024, 3);
  const double small =
      kSmall * flops_per_row * 16 / gemm_seconds(backend, allocator, world, 64, 16);
  const double q = std::min(small / large, 1.0);
  c.gemm_half_rate_rows =
      std::clamp(kSmall * kLarge * (1 - q) / (kLarge * q - kSmall), 0.0, kLarge);
  c.gemm_flops = large * (kLarge + c.gemm_half_rate_rows) / kLarge;
}

// A ring all-reduce of n ranks takes 2(n-1) steps of latency plus 2(n-1)/n of the bytes
// over the bandwidth: a one-float all-reduce gives the latency, a large one the bandwidth.
Link measure_link(Backend& backend, Allocator& allocator, Communicator& group) {
  constexpr int64_t kLarge = 4 << 20;  // floats: 16 MiB
  constexpr int kLatencyRepeats = 20, kBandwidthRepeats = 3;
  const int n = group.size();
  Buffer buf = allocator.allocate(kLarge * sizeof(float), MemoryCategory::comm_buffers,
                                  "benchmark all-reduce");
  Tensor large = buf.as(DType::f32, {kLarge}), small = large.view(0, {1});
  backend.fill(large, 1.0f);
  auto time = [&](Tensor t, int repeats) {
    group.all_reduce(t, ReduceOp::sum)->wait();  // warm-up
    group.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) group.all_reduce(t, ReduceOp::sum)->wait();
    return group_max(backend, allocator, &group, seconds_since(start)) / repeats;
  };
  const double steps = 2.0 * (n - 1);
  Link link;
  link.latency_s = time(small, kLatencyRepeats) / steps;
  const double transfer = time(large, kBandwidthRepeats) - steps * link.latency_s;
  link.bandwidth = steps / n * kLarge * sizeof(float) / std::max(transfer, 1e-9);
  return link;
}

}  // namespace

Calibration measure_devices(Backend& backend, Allocator& allocator, Communicator* world,
                            Communicator* node, const std::string& device_name) {
  Calibration c;
  c.device = device_name;
  measure_gemm(backend, allocator, world, c);
  if (node && node->size() > 1) c.intra_node = measure_link(backend, allocator, *node);
  // Every rank must agree on measuring across nodes, or the all-reduces would not match.
  const bool spans_nodes =
      world && node &&
      group_max(backend, allocator, world, world->size() > node->size() ? 1.0 : 0.0) > 0;
  if (spans_nodes) c.inter_node = measure_link(backend, allocator, *world);
  return c;
}

}  // namespace llmft
