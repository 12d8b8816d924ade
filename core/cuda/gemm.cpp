#include "core/cuda/gemm.h"

#include <algorithm>
#include <cstdint>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/error.h"

namespace llmft::cuda {
namespace {

cudaDataType_t data_type(DType type) {
  switch (type) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::f16:
      return CUDA_R_16F;
    case DType::i32:
      break;
  }
  LLMFT_FAIL("cuda gemm: no matrix product of " << dtype_name(type) << " tensors");
}

// Descriptors live for one product; RAII so that an error thrown mid-way frees them.
struct Layout {
  cublasLtMatrixLayout_t layout = nullptr;
  Layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
    LLMFT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows),
                                                  static_cast<uint64_t>(cols), ld));
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(layout); }
};

struct Operation {
  cublasLtMatmulDesc_t desc = nullptr;
  Operation() {
    LLMFT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  }
  ~Operation() { cublasLtMatmulDescDestroy(desc); }
  template <typename V>
  void set(cublasLtMatmulDescAttributes_t attribute, const V& value) {
    LLMFT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
  }
};

// The largest power of two up to 256 that divides the address: the alignment cuBLASLt may
// count on (its heuristic otherwise assumes 256 bytes and may pick a kernel that needs it).
uint32_t alignment(const void* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  uint32_t bytes = 256;
  while (bytes > 1 && address % bytes != 0) bytes /= 2;
  return bytes;
}

struct Preference {
  cublasLtMatmulPreference_t preference = nullptr;
  Preference(DType c_type, size_t workspace, const void* a, const void* b, const void* c) {
    LLMFT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
    // Split-K partial products are added in f32: cuBLASLt's in-place and output-type
    // reductions add them in c's dtype, which for bf16/fp16 rounds every partial sum.
    const uint32_t reductions = c_type == DType::f32 ? CUBLASLT_REDUCTION_SCHEME_MASK
                                                     : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    set(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, reductions);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(a));
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(b));
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(c));
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(c));
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(preference); }
  template <typename V>
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const V& value) {
    LLMFT_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value)));
  }
};

// The bias epilogue wants a 16-byte aligned vector; a bias elsewhere (a piece of a unit's
// flat parameters can start anywhere) goes into c first and the product adds onto it.
constexpr uint32_t kBiasAlignment = 16;

}  // namespace

Gemm::Gemm() {
  LLMFT_CUBLAS_CHECK(cublasLtCreate(&handle_));
  LLMFT_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
}

Gemm::~Gemm() {
  // Destructors cannot throw; these fail only when the context is already gone.
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

void Gemm::multiply(DType type, const GemmOperand& a, const GemmOperand& b, void* c, DType c_type,
                    int64_t ldc, float beta, const void* bias, cudaStream_t stream) {
  const Epilogue epilogue =
      bias != nullptr && alignment(bias) >= kBiasAlignment ? Epilogue::bias : Epilogue::none;
  run(type, a, b, c, c_type, ldc, beta, epilogue, bias, nullptr, stream);
}

bool Gemm::takes_gelu_epilogue(const void* c, const void* gelu_input, int64_t ldc,
                               const void* bias) {
  return bias != nullptr && alignment(bias) >= kBiasAlignment && alignment(c) >= kBiasAlignment &&
         alignment(gelu_input) >= kBiasAlignment && ldc % 8 == 0;
}

void Gemm::multiply_gelu(DType type, const GemmOperand& a, const GemmOperand& b, void* c,
                         void* gelu_input, int64_t ldc, const void* bias, cudaStream_t stream) {
  LLMFT_REQUIRE(takes_gelu_epilogue(c, gelu_input, ldc, bias),
                "internal: cuda gemm's GELU epilogue on operands it does not take");
  run(type, a, b, c, type, ldc, 0.0f, Epilogue::gelu_bias, bias, gelu_input, stream);
}

void Gemm::run(DType type, const GemmOperand& a, const GemmOperand& b, void* c, DType c_type,
               int64_t ldc, float beta, Epilogue epilogue, const void* bias, void* gelu_input,
               cudaStream_t stream) {
  const int64_t m = a.transposed ? a.cols : a.rows, k = a.transposed ? a.rows : a.cols;
  const int64_t n = b.transposed ? b.rows : b.cols;
  LLMFT_REQUIRE(k == (b.transposed ? b.cols : b.rows),
                "internal: cuda gemm of mismatched operands ("
                    << m << " x " << k << ") x (" << (b.transposed ? b.cols : b.rows) << " x " << n
                    << ")");
  LLMFT_REQUIRE(c_type == type || c_type == DType::f32, "internal: cuda gemm of "
                                                            << dtype_name(type) << " operands into "
                                                            << dtype_name(c_type));
  LLMFT_REQUIRE(bias == nullptr || c_type == type, "internal: cuda gemm bias of another dtype");
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // An empty sum (a weight gradient over no rows): c is the bias, or stays (beta 1), or
    // is zero (beta 0); cuBLASLt is not asked for a product without an inner dimension.
    LLMFT_REQUIRE(bias != nullptr || beta == 0.0f || beta == 1.0f,
                  "internal: cuda gemm with k 0 and beta " << beta);
    LLMFT_REQUIRE(gelu_input == nullptr, "internal: cuda gemm's GELU epilogue with k 0");
    if (bias != nullptr) {
      repeat_rows(c, ldc, bias, type, n, m, stream);
    } else if (beta == 0.0f) {
      const size_t element = dtype_size(c_type);
      LLMFT_CUDA_CHECK(cudaMemset2DAsync(c, static_cast<size_t>(ldc) * element, 0,
                                         static_cast<size_t>(m) * element, static_cast<size_t>(n),
                                         stream));
    }
    return;
  }
  const cudaDataType_t cuda_type = data_type(type);
  Operation op;
  op.set(CUBLASLT_MATMUL_DESC_TRANSA, a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
  op.set(CUBLASLT_MATMUL_DESC_TRANSB, b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
  if (epilogue != Epilogue::none) {
    op.set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue == Epilogue::gelu_bias
                                              ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                                              : CUBLASLT_EPILOGUE_BIAS);
    op.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    op.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type);
    beta = 0.0f;
  } else if (bias != nullptr) {
    repeat_rows(c, ldc, bias, type, n, m, stream);  // column j of c = bias
    beta = 1.0f;
  }
  if (epilogue == Epilogue::gelu_bias) {
    op.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, gelu_input);
    op.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ldc);
  }
  const Layout layout_a(cuda_type, a.rows, a.cols, a.ld), layout_b(cuda_type, b.rows, b.cols, b.ld);
  const Layout layout_c(data_type(c_type), m, n, ldc);
  // The outputs' alignment: c's, and the GELU input's where the epilogue writes one.
  const uint32_t output_alignment =
      gelu_input == nullptr ? alignment(c) : std::min(alignment(c), alignment(gelu_input));
  // The heuristic's choice depends only on the key's figures: asking once per key saves
  // its tens of microseconds per product and gives one product the same algorithm (the
  // same rounding) at every call.
  const AlgorithmKey key{static_cast<int>(type),
                         static_cast<int>(c_type),
                         a.transposed,
                         b.transposed,
                         m,
                         n,
                         k,
                         a.ld,
                         b.ld,
                         ldc,
                         static_cast<int>(epilogue),
                         alignment(a.data),
                         alignment(b.data),
                         output_alignment};
  auto chosen = algorithms_.find(key);
  if (chosen == algorithms_.end()) {
    const Preference preference(c_type, kWorkspaceBytes, a.data, b.data, c);
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    LLMFT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(
        handle_, op.desc, layout_a.layout, layout_b.layout, layout_c.layout, layout_c.layout,
        preference.preference, 1, &heuristic, &found));
    LLMFT_REQUIRE(found > 0, "cuda gemm: cuBLASLt has no algorithm for a "
                                 << m << " x " << n << " x " << k << " " << dtype_name(type)
                                 << " product into " << dtype_name(c_type));
    chosen = algorithms_.emplace(key, heuristic.algo).first;
  }
  const float alpha = 1.0f;
  LLMFT_CUBLAS_CHECK(cublasLtMatmul(handle_, op.desc, &alpha, a.data, layout_a.layout, b.data,
                                    layout_b.layout, &beta, c, layout_c.layout, c, layout_c.layout,
                                    &chosen->second, workspace_, kWorkspaceBytes, stream));
}

}  // namespace llmft::cuda
