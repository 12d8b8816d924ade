#include "parallel/planner/benchmark_tools.h"

#include <chrono>

#include "comm/host_reduce.h"

namespace llmft {

Tensor BenchmarkTensors::make(DType dtype, Shape shape, float value) {
  buffers_.push_back(
      allocator_.allocate(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype),
                          MemoryCategory::workspace, "benchmark tensor"));
  Tensor t = buffers_.back().as(dtype, std::move(shape));
  if (dtype == DType::i32) {
    const std::vector<int32_t> zeros(static_cast<size_t>(t.numel()), 0);
    backend_.copy_to_device(t, zeros.data());
  } else {
    backend_.fill(t, value);
  }
  return t;
}

Tensor BenchmarkTensors::stream_positions(int64_t T, int64_t batch) {
  Tensor t = make(DType::i32, {batch, T});
  std::vector<int32_t> positions(static_cast<size_t>(batch * T));
  for (size_t i = 0; i < positions.size(); ++i) {
    positions[i] = static_cast<int32_t>(static_cast<int64_t>(i) % T);
  }
  backend_.copy_to_device(t, positions.data());
  return t;
}

double group_max(Backend& backend, Allocator& allocator, Communicator* group, double value) {
  if (!group) return value;
  Buffer buf = allocator.allocate(sizeof(float), MemoryCategory::comm_buffers, "benchmark value");
  return reduce_host_value(*group, backend, buf.as(DType::f32, {1}), value, ReduceOp::max);
}

double group_min(Backend& backend, Allocator& allocator, Communicator* group, double value) {
  return -group_max(backend, allocator, group, -value);
}

double slowest_seconds(Backend& backend, Allocator& allocator, Communicator* world,
                       const std::function<void()>& run, int repeats) {
  run();  // warm-up
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) run();
  backend.synchronize();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
  return group_max(backend, allocator, world, seconds);
}

}  // namespace llmft
