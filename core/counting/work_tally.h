// WorkTally: what a step's kernels do, tallied by the counting device as the real Model and
// Engine call them (core/counting/counting_backend.h), so that the time model prices the
// work the code really does (parallel/planner/step_time.h) the way the memory model
// predicts what it really allocates: the matrix products by their row count and their
// M x N x K shape (a GPU's GEMM library runs each shape at its own rate), the attention
// calls by their shape, every other kernel by its kind and the bytes its tensors hold (each
// argument read or written once), and how many kernels run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>

namespace llmft {

// The kinds of kernels other than products and attention, each with a rate of its own
// (bytes/s as tallied): their arithmetic per byte differs by 10x and more.
enum class KernelKind {
  copy,           // fill, copy, convert, host transfers
  add,            // add_inplace (residuals, accumulation)
  norm,           // LayerNorm and RMSNorm, forward and backward
  rope,           // rotary embedding
  activation,     // GELU, SwiGLU
  embedding,      // token (and position) embedding
  cross_entropy,  // the three passes over the logits
  reduction,      // sums of squares (the gradient norm)
  optimizer,      // AdamW, SGD, AdaLomo's passes
};
constexpr int kKernelKinds = 9;

struct WorkTally {
  // One attention shape: batch, queries (= keys, training), query heads, key/value heads,
  // head size, and whether it is the backward pass.
  using AttentionShape = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

  int64_t kernel_calls = 0;
  std::array<double, kKernelKinds> kernel_bytes{};
  // One product's shape: the output's M rows and N columns, and K, the summed dimension.
  using GemmShape = std::tuple<int64_t, int64_t, int64_t>;

  std::map<int64_t, double> gemm_flops;         // by the product's row (token) count
  std::map<GemmShape, int64_t> gemm_calls;      // calls of each shape
  std::map<AttentionShape, int64_t> attention;  // calls of each shape

  void add_kernel(KernelKind kind, double bytes);
  // A product of 2 M N K FLOPs over `rows` tokens.
  void add_gemm(int64_t rows, const GemmShape& shape);
  void add_attention(const AttentionShape& shape);

  // This tally less `other` (the work `other`'s run did and this one repeated).
  WorkTally minus(const WorkTally& other) const;
  double total_gemm_flops() const;
};

}  // namespace llmft
