// What the startup benchmarks (device_benchmark.h, kernel_benchmark.h) share: tensors made
// and filled for a measurement, and the seconds backend work takes on the slowest rank.
#pragma once

#include <functional>
#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"

namespace llmft {

// Benchmark tensors, each filled with a small value (token ids with 0), owned together
// and counted as workspace.
class BenchmarkTensors {
 public:
  BenchmarkTensors(Backend& backend, Allocator& allocator)
      : backend_(backend), allocator_(allocator) {}
  Tensor make(DType dtype, Shape shape, float value = 0.01f);
  // (batch, T) i32 positions 0 .. T - 1 in every row: streams, every query seeing all keys
  // before it in its row.
  Tensor stream_positions(int64_t T, int64_t batch = 1);

 private:
  Backend& backend_;
  Allocator& allocator_;
  std::vector<Buffer> buffers_;
};

// The largest of a host value over `group` (the value itself without one).
double group_max(Backend& backend, Allocator& allocator, Communicator* group, double value);
// The smallest, likewise.
double group_min(Backend& backend, Allocator& allocator, Communicator* group, double value);

// Seconds one `run` takes (the mean of `repeats` after one warm-up, the backend
// synchronized around them) on the slowest rank of `world` (null: this rank).
double slowest_seconds(Backend& backend, Allocator& allocator, Communicator* world,
                       const std::function<void()>& run, int repeats);

}  // namespace llmft
