#include "launch/auto_plan.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "core/byte_size.h"
#include "core/compute_dtype.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/progress.h"
#include "launch/calibration_cache.h"
#include "launch/plan_agreement.h"
#include "launch/plan_json.h"
#include "launch/plan_options.h"
#include "parallel/planner/device_benchmark.h"
#include "parallel/planner/kernel_benchmark.h"
#include "parallel/planner/plan_table.h"
#include "parallel/planner/planner.h"

namespace llmft {

namespace {

constexpr int kPlanRows = 10;

// The ranks on this rank's machine (null for a one-rank job).
std::unique_ptr<Communicator> node_group(Communicator* world) {
  if (!world) return nullptr;
  const int color = static_cast<int>(std::hash<std::string>{}(this_host()) & 0x7fffffff);
  return world->split(color, world->rank());
}

// This job's device before calibration: the CPU preset shared by the ranks on a machine
// (memory: --device-memory, or the machine's share), or the --gpu preset and overrides,
// with the memory the GPU backend reserved, the fixed overhead it measured and what the
// world's communicator took (measured; the mesh's groups, split from it, share it).
DeviceDescription base_device(const TrainOptions& o, Backend& backend, int ranks_per_node) {
  if (o.device != "cpu") {
    DeviceDescription d = describe_device(o.cluster);
    d.attention_workspace = backend.attention_workspace_rule();
    if (backend.memory_capacity() > 0) {
      d.memory_bytes =
          backend.memory_capacity() + backend.fixed_overhead() + backend.communicator_overhead();
      d.overhead_bytes = backend.fixed_overhead();
      d.overhead_measured = true;
      d.communicator_bytes = backend.communicator_overhead();
      d.communicator_measured = true;
    }
    d.host_memory_bytes = host_memory_budget(o, ranks_per_node);
    d.host_memory_measured = true;
    return d;
  }
  DeviceDescription d = device_preset("cpu");
  d.host_memory_bytes = host_memory_budget(o, ranks_per_node);
  const size_t budget = parse_byte_size(o.device_memory, "--device-memory");
  d.memory_bytes = budget > 0 ? budget : d.memory_bytes / ranks_per_node;
  d.peak_flops /= ranks_per_node;
  d.gpus_per_node = ranks_per_node;
  return d;
}

// The figures of a calibration, in order, as floats (what a broadcast carries).
std::vector<float> calibration_figures(const Calibration& c) {
  std::vector<float> figures{static_cast<float>(c.gemm_flops),
                             static_cast<float>(c.gemm_half_rate_rows),
                             static_cast<float>(c.memory_bandwidth),
                             static_cast<float>(c.kernel_call_s), static_cast<float>(c.gemm_size)};
  for (const Link* link : {&c.intra_node, &c.inter_node}) {
    for (const Collective op : kLinkCollectives) {
      figures.push_back(static_cast<float>(link->rate(op).bandwidth));
      figures.push_back(static_cast<float>(link->rate(op).latency_s));
    }
  }
  return figures;
}

Calibration calibration_from_figures(const std::vector<float>& figures) {
  Calibration c;
  auto next = figures.begin();
  c.gemm_flops = *next++;
  c.gemm_half_rate_rows = *next++;
  c.memory_bandwidth = *next++;
  c.kernel_call_s = *next++;
  c.gemm_size = *next++;
  for (Link* link : {&c.intra_node, &c.inter_node}) {
    for (const Collective op : kLinkCollectives) {
      link->rate(op).bandwidth = *next++;
      link->rate(op).latency_s = *next++;
    }
  }
  return c;
}

// Rank 0's `cached` calibration (or none) on every rank of `world`.
std::optional<Calibration> broadcast_calibration(Backend& backend, Allocator& allocator,
                                                 Communicator& world,
                                                 const std::optional<Calibration>& cached) {
  std::vector<float> shared = calibration_figures(cached.value_or(Calibration{}));
  shared.push_back(cached ? 1.0f : 0.0f);  // found
  broadcast_floats(backend, allocator, world, shared);
  if (shared.back() != 1.0f) return std::nullopt;
  shared.pop_back();
  return calibration_from_figures(shared);
}

// How far the probe may stray from the cached GEMM rate before the cache is taken for
// stale, as a factor either way: above the run-to-run noise of probe against calibration
// on a machine shared with other work (docs/ARCHITECTURE.md, "The calibration cache",
// gives the figures measured), and well below the 2-3x a cache measured on a busy machine
// is off by.
constexpr double kStaleFactor = 1.5;

double gflops(double flops) {
  return flops * 1e-9;
}

// The cached calibration when the probe agrees with it (saying so on rank 0), else none
// (saying it is stale). Collective over `world`: every rank sees the same figures.
std::optional<Calibration> checked(Backend& backend, Allocator& allocator, Communicator* world,
                                   const Calibration& cached, DType gemm_dtype, bool lead) {
  const double probe = probe_gemm_flops(backend, allocator, world, gemm_dtype, cached);
  const double ratio = probe / cached.gemm_flops;
  const bool fresh = ratio <= kStaleFactor && ratio >= 1 / kStaleFactor;
  if (lead) {
    std::printf(
        "calibration: cached GEMM rate %.1f GFLOP/s per rank (measured %s), probe "
        "measures %.1f (%+.0f%%): %s (stale beyond x%.2g either way)\n",
        gflops(cached.gemm_flops), conditions_text(cached).c_str(), gflops(probe),
        (ratio - 1) * 100, fresh ? "kept" : "stale, recalibrating", kStaleFactor);
    std::fflush(stdout);
  }
  if (!fresh) return std::nullopt;
  return cached;
}

// Rank 0's cached calibration while the probe agrees with it, or a fresh measurement
// (written to the cache), identical on every rank.
Calibration calibrate(Backend& backend, Allocator& allocator, Communicator* world,
                      Communicator* node, const std::string& device_name, DType gemm_dtype,
                      int world_size, int threads) {
  const bool lead = !world || world->rank() == 0;
  const std::string path = default_calibration_path();
  // Rank 0 reads the cache and broadcasts what it found.
  std::string key;
  std::optional<Calibration> cached;
  if (lead) {
    key = calibration_key(this_host(), device_name, gemm_dtype, world_size, threads);
    cached = read_calibration(path, key);
  }
  if (world) {
    const std::optional<Calibration> read = cached;
    cached = broadcast_calibration(backend, allocator, *world, cached);
    // When and under what load, for rank 0's line (the figures are the broadcast ones).
    if (cached && read) {
      cached->measured_at = read->measured_at;
      cached->load_average = read->load_average;
      cached->online_cpus = read->online_cpus;
    }
  }
  if (cached) cached = checked(backend, allocator, world, *cached, gemm_dtype, lead);
  if (cached) {
    cached->device = device_name;
    return *cached;
  }
  Calibration measured = measure_devices(backend, allocator, world, node, device_name, gemm_dtype);
  if (lead) {
    record_conditions(measured);
    write_calibration(path, key, measured);
    std::printf("calibration: measured GEMM rate %.1f GFLOP/s per rank (%s), written to %s\n",
                gflops(measured.gemm_flops), conditions_text(measured).c_str(), path.c_str());
    std::fflush(stdout);
  }
  return measured;
}

}  // namespace

Layout auto_plan(const TrainOptions& o, const po::variables_map& values, const ModelConfig& config,
                 const OptimizerConfig& optimizer, Backend& backend, Communicator* world,
                 int world_size) {
  const bool lead = !world || world->rank() == 0;
  const std::unique_ptr<Communicator> node = node_group(world);
  // Before base_device reserves the slab, so NCCL's buffers for it lie outside.
  if (node && node->size() > 1) node->warm_up(parse_dtype(o.dtype));
  PlanRequest request;
  request.device = base_device(o, backend, node ? node->size() : 1);
  Allocator allocator(backend.memory(), 0);  // outside the run's budget and peaks
  // Every rank plans from the same figures (calibrations are the slowest rank's or node's
  // already).
  request.device = agreed_device(backend, allocator, world, request.device);
  if (!o.no_calibrate) {
    // Three stages: the GEMM and links (or the cached figures' probe), attention, the rest.
    io::Progress progress("calibration", 3, io::ProgressCount::items("stages"));
    request.device = calibrated(
        request.device, calibrate(backend, allocator, world, node.get(), request.device.name,
                                  compute_dtype(backend.compute_rule(), parse_dtype(o.dtype)),
                                  world_size, o.threads));
    progress.update(1);
    // The run's own shapes and length, measured every time (milliseconds).
    request.device.attention =
        measure_attention(backend, allocator, world, config, o.seq_len, parse_dtype(o.dtype));
    progress.update(2);
    request.device.kernel_rates = measure_kernel_rates(backend, allocator, world, config, o.seq_len,
                                                       parse_dtype(o.dtype), optimizer.kind);
    progress.update(3);
  }
  request.workload =
      Workload{config, optimizer, parse_dtype(o.dtype), o.seq_len, 0, o.clip_grad > 0};
  const bool tp_given = !values["tp"].defaulted();
  request.workload.global_batch =
      o.global_batch > 0 ? o.global_batch
                         : o.micro_batch * o.grad_accum * world_size / (tp_given ? o.tp : 1);
  request.world = world_size;
  request.memory_margin = o.cluster.memory_margin;
  if (tp_given) request.constraints.tp = o.tp;
  if (!values["zero"].defaulted()) request.constraints.zero_stage = o.zero;
  if (!values["micro-batch"].defaulted()) request.constraints.micro_batch = o.micro_batch;
  if (!values["activation-checkpointing"].defaulted()) {
    request.constraints.checkpointed_blocks = o.checkpointed_blocks;
  }
  request.constraints.offload_optimizer =
      parse_layout_switch(o.offload_optimizer, "--offload-optimizer");
  request.constraints.sequence_parallel =
      parse_layout_switch(o.sequence_parallel, "--sequence-parallel");

  const PlanResult result = plan_layouts(request);
  if (lead) {
    std::printf("%s", plan_table(request, result, kPlanRows).c_str());
    std::fflush(stdout);
    if (!o.plan_json.empty()) {
      io::write_file_atomically(o.plan_json, plan_json(request, result).dump() + "\n");
    }
  }
  return lead_layout(backend, allocator, world, chosen_layout(request, result).layout);
}

void apply_layout(TrainOptions& o, const Layout& layout) {
  o.dp = layout.dp;
  o.tp = layout.tp;
  o.zero = layout.zero_stage;
  o.micro_batch = layout.micro_batch;
  o.grad_accum = layout.grad_accum;
  o.checkpointed_blocks = layout.checkpointed_blocks;
  o.offload = layout.offload_optimizer;
  o.sequence = layout.sequence_parallel;
}

}  // namespace llmft
