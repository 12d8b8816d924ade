#include "parallel/planner/device_benchmark.h"

#include <algorithm>
#include <chrono>

namespace llmft {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The largest of a host value over the group (itself without one).
double group_max(Backend& backend, Allocator& allocator, Communicator* group, double value) {
  if (!group) return value;
  Buffer buf = allocator.allocate(sizeof(float), MemoryCategory::comm_buffers, "benchmark value");
  Tensor t = buf.as(DType::f32, {1});
  const float mine = static_cast<float>(value);
  backend.copy_to_device(t, &mine);
  group->all_reduce(t, ReduceOp::max)->wait();
  float out = 0.0f;
  backend.copy_to_host(&out, t);
  return out;
}

double gemm_flops(Backend& backend, Allocator& allocator, Communicator* world) {
  constexpr int64_t kSize = 1024, kRepeats = 3;
  auto take = [&](const char* what) {
    Buffer b = allocator.allocate(kSize * kSize * sizeof(float), MemoryCategory::workspace, what);
    backend.fill(b.as(DType::f32, {kSize * kSize}), 0.01f);
    return b;
  };
  Buffer a = take("benchmark input"), w = take("benchmark weight"), out = take("benchmark output");
  auto gemm = [&] {
    backend.linear_forward(out.as(DType::f32, {kSize, kSize}), a.as(DType::f32, {kSize, kSize}),
                           w.as(DType::f32, {kSize, kSize}), Tensor());
  };
  gemm();  // warm-up
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) gemm();
  backend.synchronize();
  const double slowest = group_max(backend, allocator, world, seconds_since(start));
  return 2.0 * kSize * kSize * kSize * kRepeats / slowest;
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
  c.gemm_flops = gemm_flops(backend, allocator, world);
  if (node && node->size() > 1) c.intra_node = measure_link(backend, allocator, *node);
  // Every rank must agree on measuring across nodes, or the all-reduces would not match.
  const bool spans_nodes =
      world && node &&
      group_max(backend, allocator, world, world->size() > node->size() ? 1.0 : 0.0) > 0;
  if (spans_nodes) c.inter_node = measure_link(backend, allocator, *world);
  return c;
}

}  // namespace llmft
