#include "launch/plan_agreement.h"

#include <cmath>

#include "parallel/planner/benchmark_tools.h"

namespace llmft {

namespace {

constexpr double kMiB = 1 << 20;

}  // namespace

void broadcast_floats(Backend& backend, Allocator& allocator, Communicator& world,
                      std::vector<float>& values) {
  Buffer buf = allocator.allocate(values.size() * sizeof(float), MemoryCategory::comm_buffers,
                                  "plan agreement");
  const Tensor t = buf.as(DType::f32, {static_cast<int64_t>(values.size())});
  backend.copy_to_device(t, values.data());
  world.broadcast(t, 0)->wait();
  backend.copy_to_host(values.data(), t);
}

DeviceDescription agreed_device(Backend& backend, Allocator& allocator, Communicator* world,
                                DeviceDescription d) {
  if (!world) return d;
  const auto largest = [&](double x) { return group_max(backend, allocator, world, x); };
  const auto smallest = [&](double x) { return group_min(backend, allocator, world, x); };
  const auto most_mib = [&](size_t bytes) {
    return static_cast<size_t>(largest(std::ceil(static_cast<double>(bytes) / kMiB)) * kMiB);
  };
  const auto least_mib = [&](size_t bytes) {
    return static_cast<size_t>(smallest(std::floor(static_cast<double>(bytes) / kMiB)) * kMiB);
  };
  const size_t overheads = d.overhead_bytes + d.communicator_bytes;
  const size_t left = d.memory_bytes > overheads ? d.memory_bytes - overheads : 0;
  d.overhead_bytes = most_mib(d.overhead_bytes);
  d.communicator_bytes = most_mib(d.communicator_bytes);
  d.memory_bytes = least_mib(left) + d.overhead_bytes + d.communicator_bytes;
  d.host_memory_bytes = least_mib(d.host_memory_bytes);
  d.peak_flops = smallest(d.peak_flops);
  d.gpus_per_node = static_cast<int>(smallest(d.gpus_per_node));
  return d;
}

Layout lead_layout(Backend& backend, Allocator& allocator, Communicator* world, Layout layout) {
  if (!world) return layout;
  std::vector<float> fields{
      static_cast<float>(layout.dp),          static_cast<float>(layout.tp),
      static_cast<float>(layout.zero_stage),  static_cast<float>(layout.micro_batch),
      static_cast<float>(layout.grad_accum),  static_cast<float>(layout.checkpointed_blocks),
      layout.offload_optimizer ? 1.0f : 0.0f, layout.sequence_parallel ? 1.0f : 0.0f};
  broadcast_floats(backend, allocator, *world, fields);
  return Layout{static_cast<int>(fields[0]), static_cast<int>(fields[1]),
                static_cast<int>(fields[2]), static_cast<int>(fields[3]),
                static_cast<int>(fields[4]), static_cast<int>(fields[5]),
                fields[6] != 0.0f,           fields[7] != 0.0f};
}

}  // namespace llmft
