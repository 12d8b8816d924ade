#include "parallel/planner/device_benchmark.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <utility>

#include "core/compute_dtype.h"
#include "parallel/planner/benchmark_tools.h"
#include "parallel/planner/collective_cost.h"

namespace llmft {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds of one (rows x size) @ (size x size)^T GEMM in `dtype` on the slowest rank: the
// fastest of five timings, each the mean of `repeats`. Other processes' work only ever adds
// time, so the fastest timing is the machine's own rate, the figure a quiet machine gives:
// a mean taken during a burst of other work would read 2-3x slow and mislead every plan the
// cache serves.
double gemm_seconds(Backend& backend, Allocator& allocator, Communicator* world, int64_t rows,
                    int64_t size, DType dtype, int repeats) {
  constexpr int kTimings = 5;
  BenchmarkTensors t(backend, allocator);
  const Tensor a = t.make(dtype, {rows, size}), w = t.make(dtype, {size, size});
  const Tensor out = t.make(dtype, {rows, size});
  double fastest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kTimings; ++i) {
    fastest = std::min(fastest, slowest_seconds(
                                    backend, allocator, world,
                                    [&] { backend.linear_forward(out, a, w, Tensor()); }, repeats));
  }
  return fastest;
}

// The rate of a large GEMM from that of a square one of `size` rows, under the model
// rate(r) = peak x r / (r + half).
double large_gemm_rate(double square_rate, double size, double half_rate_rows) {
  return square_rate * (size + half_rate_rows) / size;
}

// FLOP/s of the square (size x size) @ (size x size)^T GEMM on the slowest rank.
double square_gemm_rate(Backend& backend, Allocator& allocator, Communicator* world, int64_t size,
                        DType dtype) {
  const double rows = static_cast<double>(size);
  return 2.0 * rows * rows * rows / gemm_seconds(backend, allocator, world, size, size, dtype, 1);
}

// The large-GEMM rate and the row count at which a GEMM runs at half of it, from the
// rates of a square GEMM and a 64-row one of the same width under the model
// rate(r) = peak x r / (r + half). The width starts at 1024 and doubles, to 8192 at most,
// until the square GEMM takes a millisecond: a GPU's 1024-wide GEMM takes microseconds,
// which would measure its launch rather than its rate. Every rank sees the slowest rank's
// times, so all choose the same width.
void measure_gemm(Backend& backend, Allocator& allocator, Communicator* world, DType dtype,
                  Calibration& c) {
  constexpr int64_t kMaxSize = 8192;
  constexpr double kSmall = 64, kLongEnough = 1e-3;
  int64_t size = 1024;
  double large = square_gemm_rate(backend, allocator, world, size, dtype);
  auto seconds = [&] { return 2.0 * size * size * static_cast<double>(size) / large; };
  while (seconds() < kLongEnough && size < kMaxSize) {
    size *= 2;
    large = square_gemm_rate(backend, allocator, world, size, dtype);
  }
  const double large_rows = static_cast<double>(size);
  const double flops_per_row = 2.0 * large_rows * large_rows;
  const double small =
      kSmall * flops_per_row / gemm_seconds(backend, allocator, world, 64, size, dtype, 16);
  const double q = std::min(small / large, 1.0);
  c.gemm_half_rate_rows =
      std::clamp(kSmall * large_rows * (1 - q) / (large_rows * q - kSmall), 0.0, large_rows);
  c.gemm_flops = large_gemm_rate(large, large_rows, c.gemm_half_rate_rows);
  c.gemm_size = large_rows;
}

// Seconds of one add_inplace over two tensors of `elements` floats each, on the slowest rank.
double add_seconds(Backend& backend, Allocator& allocator, Communicator* world, int64_t elements,
                   int repeats) {
  BenchmarkTensors t(backend, allocator);
  const Tensor acc = t.make(DType::f32, {elements}, 0.0f), x = t.make(DType::f32, {elements}, 0.0f);
  return slowest_seconds(
      backend, allocator, world, [&] { backend.add_inplace(acc, x); }, repeats);
}

// What kernels other than products cost apart from their kind's rate: the bytes/s of one
// that streams from memory (64 MiB), counted as the work tally counts them (each tensor's
// bytes once), and the seconds of a call that moves almost nothing (its launch, or its
// threads' start and join).
void measure_kernels(Backend& backend, Allocator& allocator, Communicator* world, Calibration& c) {
  constexpr int64_t kMemory = 8 << 20, kTiny = 16;  // floats per tensor
  c.kernel_call_s = add_seconds(backend, allocator, world, kTiny, 2000);
  const double memory = add_seconds(backend, allocator, world, kMemory, 5);
  c.memory_bandwidth = 2.0 * kMemory * sizeof(float) / std::max(memory - c.kernel_call_s, 1e-9);
}

// Seconds one `run` of a collective over `group` takes, waited: the mean of `repeats`
// started together after a warm-up and a barrier, on the group's slowest rank.
double collective_call_seconds(Backend& backend, Allocator& allocator, Communicator& group,
                               const std::function<void()>& run, int repeats) {
  run();  // warm-up
  group.barrier();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) run();
  return group_max(backend, allocator, &group, seconds_since(start)) / repeats;
}

// Seconds of one `op` over `group` whose full buffer (an all-reduce's data, a
// reduce-scatter's input, an all-gather's output) holds `elements` floats, a multiple of
// the group's size.
double collective_op_seconds(Backend& backend, Allocator& allocator, Communicator& group,
                             Collective op, int64_t elements, int repeats) {
  const int64_t shard_elements = elements / group.size();
  BenchmarkTensors t(backend, allocator);
  const Tensor full = t.make(DType::f32, {elements}, 1.0f);
  const Tensor shard = t.make(DType::f32, {shard_elements}, 1.0f);
  const std::function<void()> run = [&] {
    switch (op) {
      case Collective::all_reduce:
        return group.all_reduce(full, ReduceOp::sum)->wait();
      case Collective::reduce_scatter:
        return group.reduce_scatter(full, shard)->wait();
      case Collective::all_gather:
      case Collective::broadcast:
        return group.all_gather(shard, full)->wait();
    }
  };
  return collective_call_seconds(backend, allocator, group, run, repeats);
}

// `op`'s rate over `group` under the ring model (collective_cost.h): the latency per ring
// step from a call of one float per rank, the bandwidth from a large one. The large one
// starts at 16 MiB and doubles, to 256 MiB at most, until a call takes 2 ms: NCCL reaches
// its bus bandwidth only on large buffers, which a step's per-unit collectives are (a
// LLaMA-7B block's gradient is 400 MB in bf16), while CPU ranks take longer than that at
// the first size. Every rank sees the slowest rank's times, so all choose the same size.
CollectiveRate measure_rate(Backend& backend, Allocator& allocator, Communicator& group,
                            Collective op) {
  constexpr int64_t kFirstBytes = 16 << 20, kMaxBytes = 256 << 20;
  constexpr double kLongEnough = 2e-3;
  constexpr int kLatencyRepeats = 20, kBandwidthRepeats = 3;
  const int n = group.size();
  const double steps = ring_steps(op, n);
  CollectiveRate rate;
  rate.latency_s = collective_op_seconds(backend, allocator, group, op, n, kLatencyRepeats) / steps;
  int64_t bytes = kFirstBytes;
  while (true) {
    const int64_t elements = bytes / sizeof(float) / n * n;
    const double seconds =
        collective_op_seconds(backend, allocator, group, op, elements, kBandwidthRepeats);
    if (seconds >= kLongEnough || bytes >= kMaxBytes) {
      const double full_bytes = static_cast<double>(elements) * sizeof(float);
      const double transfer = std::max(seconds - steps * rate.latency_s, 1e-9);
      rate.bandwidth = ring_bytes(op, full_bytes, n) / transfer;
      return rate;
    }
    bytes *= 2;
  }
}

// Each collective a step runs, measured over `group`.
Link measure_link(Backend& backend, Allocator& allocator, Communicator& group) {
  Link link;
  for (const Collective op : kLinkCollectives) {
    link.rate(op) = measure_rate(backend, allocator, group, op);
  }
  return link;
}

// The slowest node's `mine` on every rank of `world` (the largest latency, the smallest
// bandwidth of each collective): nodes measure their own links, and every rank must plan
// from the same figures to choose the same layout. Unknown where no node measured one.
Link slowest_link(Backend& backend, Allocator& allocator, Communicator& world, const Link& mine) {
  if (group_max(backend, allocator, &world, mine.known() ? 1.0 : 0.0) == 0) return Link{};
  constexpr double kNone = std::numeric_limits<double>::infinity();
  const bool known = mine.known();
  Link slowest;
  for (const Collective op : kLinkCollectives) {
    const CollectiveRate& rate = mine.rate(op);
    slowest.rate(op).bandwidth =
        group_min(backend, allocator, &world, known ? rate.bandwidth : kNone);
    slowest.rate(op).latency_s =
        group_max(backend, allocator, &world, known ? rate.latency_s : 0.0);
  }
  return slowest;
}

}  // namespace

std::pair<double, double> attention_seconds(Backend& backend, Allocator& allocator,
                                            Communicator* world, const ModelConfig& model,
                                            int64_t T, DType stored, int64_t batch) {
  const int64_t H = model.n_head, KVH = model.n_kv_head, D = model.head_dim();
  const int64_t width = (H + 2 * KVH) * D;
  const DType dtype = compute_dtype(backend.compute_rule(), stored);
  BenchmarkTensors t(backend, allocator);
  const Tensor qkv = t.make(dtype, {batch, T, width}), dqkv = t.make(dtype, {batch, T, width});
  const Tensor out = t.make(dtype, {batch, T, H * D}), dout = t.make(dtype, {batch, T, H * D});
  const Tensor lse = t.make(DType::f32, {batch, H, T});
  const Tensor positions = t.stream_positions(T, batch);
  const size_t workspace_bytes = backend.attention_backward_workspace(qkv, positions, H, KVH);
  const Tensor workspace =
      workspace_bytes == 0
          ? Tensor()
          : t.make(DType::f32, {static_cast<int64_t>(workspace_bytes / sizeof(float))});
  const int repeats = T >= 1024 ? 2 : 5;
  const double forward = slowest_seconds(
      backend, allocator, world,
      [&] { backend.attention_forward(out, lse, qkv, positions, H, KVH, 0); }, repeats);
  const double backward = slowest_seconds(
      backend, allocator, world,
      [&] { backend.attention_backward(dqkv, dout, qkv, out, lse, positions, H, KVH, workspace); },
      repeats);
  return {forward, backward};
}

AttentionCost measure_attention(Backend& backend, Allocator& allocator, Communicator* world,
                                const ModelConfig& model, int seq_len, DType stored) {
  // t(T) = quadratic x T(T+1)/2 + linear x T per head, from two lengths.
  const int64_t long_length = seq_len, short_length = std::max(1, seq_len / 2);
  const auto [forward_long, backward_long] =
      attention_seconds(backend, allocator, world, model, long_length, stored);
  const auto [forward_short, backward_short] =
      attention_seconds(backend, allocator, world, model, short_length, stored);
  const double heads = model.n_head;
  auto fit = [&](double t_long, double t_short, double& quadratic, double& linear) {
    const double pairs_long = long_length * (long_length + 1) / 2.0;
    const double pairs_short = short_length * (short_length + 1) / 2.0;
    const double denominator = pairs_long * short_length - pairs_short * long_length;
    quadratic = denominator > 0
                    ? std::max(0.0, (t_long * short_length - t_short * long_length) / denominator)
                    : 0.0;
    linear = std::max(0.0, (t_long - quadratic * pairs_long) / long_length);
    quadratic /= heads;
    linear /= heads;
  };
  AttentionCost cost;
  cost.head_dim = model.head_dim();
  cost.group = model.n_head / model.n_kv_head;
  fit(forward_long, forward_short, cost.forward_quadratic, cost.forward_linear);
  fit(backward_long, backward_short, cost.backward_quadratic, cost.backward_linear);
  return cost;
}

double probe_gemm_flops(Backend& backend, Allocator& allocator, Communicator* world,
                        DType gemm_dtype, const Calibration& cached) {
  return large_gemm_rate(square_gemm_rate(backend, allocator, world,
                                          static_cast<int64_t>(cached.gemm_size), gemm_dtype),
                         cached.gemm_size, cached.gemm_half_rate_rows);
}

Calibration measure_devices(Backend& backend, Allocator& allocator, Communicator* world,
                            Communicator* node, const std::string& device_name, DType gemm_dtype) {
  Calibration c;
  c.device = device_name;
  measure_gemm(backend, allocator, world, gemm_dtype, c);
  measure_kernels(backend, allocator, world, c);
  if (node && node->size() > 1) c.intra_node = measure_link(backend, allocator, *node);
  if (world) c.intra_node = slowest_link(backend, allocator, *world, c.intra_node);
  // Every rank must agree on measuring across nodes, or the all-reduces would not match.
  const bool spans_nodes =
      world && node &&
      group_max(backend, allocator, world, world->size() > node->size() ? 1.0 : 0.0) > 0;
  if (spans_nodes) c.inter_node = measure_link(backend, allocator, *world);
  return c;
}

}  // namespace llmft
