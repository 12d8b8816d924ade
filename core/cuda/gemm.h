// Matrix products on the GPU through cuBLASLt: inputs and outputs in f32, bf16 or fp16
// (16-bit inputs may also write an f32 output: a weight gradient added into an f32 sum),
// always accumulated in f32, split-K partial sums included (for f32 data without TF32, so
// an f32 run computes what the CPU does), an optional bias added by the epilogue (or, when
// not 16-byte aligned, written into c before the product adds onto it), operands of any
// alignment (the heuristic is told each pointer's; its choice is kept per shape and
// alignment), and a workspace of a fixed, explicit size that the backend counts among its
// fixed memory.
// Thread-safety: one thread (one handle).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

#include "core/dtype.h"

namespace llmft::cuda {

// A column-major operand: `data` holds a (rows x cols) matrix with leading dimension ld,
// used transposed when `transposed`.
struct GemmOperand {
  const void* data;
  int64_t rows, cols, ld;
  bool transposed;
};

class Gemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS's default on Hopper

  Gemm();
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // c (m x n, column-major, leading dimension ldc, of c_type) = op(a) op(b) + beta c, or
  // op(a) op(b) + bias(m) in every column when a bias is given (beta unused). a, b and
  // bias share `type`; c_type is `type` or f32; any element alignment will do.
  void multiply(DType type, const GemmOperand& a, const GemmOperand& b, void* c, DType c_type,
                int64_t ldc, float beta, const void* bias, cudaStream_t stream);
  // gelu_input = op(a) op(b) + bias and c = gelu(gelu_input) (tanh approximation) in one
  // product, through cuBLASLt's GELU_AUX_BIAS epilogue: c, gelu_input and bias of `type`,
  // both outputs with leading dimension ldc. REQUIRES: takes_gelu_epilogue().
  void multiply_gelu(DType type, const GemmOperand& a, const GemmOperand& b, void* c,
                     void* gelu_input, int64_t ldc, const void* bias, cudaStream_t stream);
  // Whether the epilogue takes these pointers: a bias and both outputs 16-byte aligned,
  // and ldc a multiple of 8 (cuBLASLt's rule for the GELU input's leading dimension).
  static bool takes_gelu_epilogue(const void* c, const void* gelu_input, int64_t ldc,
                                  const void* bias);

 private:
  // The epilogue a product runs.
  enum class Epilogue { none, bias, gelu_bias };

  // The product of multiply and multiply_gelu: epilogue none or bias (gelu_input null) or
  // gelu_bias.
  void run(DType type, const GemmOperand& a, const GemmOperand& b, void* c, DType c_type,
           int64_t ldc, float beta, Epilogue epilogue, const void* bias, void* gelu_input,
           cudaStream_t stream);

  // What the heuristic is told: the inputs' and c's dtypes, transposes, m, n, k, leading
  // dimensions, the epilogue, and the alignment of a, b and c.
  using AlgorithmKey = std::tuple<int, int, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  int64_t, int, uint32_t, uint32_t, uint32_t>;

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::map<AlgorithmKey, cublasLtMatmulAlgo_t> algorithms_;  // the heuristic's choices
};

}  // namespace llmft::cuda
