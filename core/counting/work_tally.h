// WorkTally: what a step's kernels do, tallied by the counting device as the real Model and
// Engine call them (core/counting/counting_backend.h), so that the time model prices the
// work the code really does (parallel/planner/step_time.h) the way the memory model
// predicts what it really allocates: the matrix products by their row count, the attention
// calls by their shape, every other kernel by the bytes its tensors hold (each argument read
// or written once), and how many kernels run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>

namespace llmft {

struct WorkTally {
  // Bytes of non-product kernels, by the size of the call (the bytes of all its tensors):
  // class c holds calls of [2^c, 2^(c+1)) bytes, whose tensors stay in cache or not.
  static constexpr int kSizeClasses = 48;

  // One attention shape: batch, queries (= keys, training), query heads, key/value heads,
  // head size, and whether it is the backward pass.
  using AttentionShape = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

  int64_t kernel_calls = 0;
  std::array<double, kSizeClasses> elementwise_bytes{};
  std::map<int64_t, double> gemm_flops;         // by the product's row (token) count
  std::map<AttentionShape, int64_t> attention;  // calls of each shape

  void add_elementwise(double bytes);
  void add_gemm(int64_t rows, double flops);
  void add_attention(const AttentionShape& shape);

  // This tally less `other` (the work `other`'s run did and this one repeated).
  WorkTally minus(const WorkTally& other) const;
  double total_gemm_flops() const;
};

}  // namespace llmft
