#include "core/cuda/cuda_check.h"

#include "core/error.h"

namespace llmft {

void check_cuda(cudaError_t code, const char* expr, const char* file, int line) {
  if (code == cudaSuccess) return;
  LLMFT_FAIL("CUDA error " << static_cast<int>(code) << " (" << cudaGetErrorName(code) << ": "
                           << cudaGetErrorString(code) << ") in " << expr << " at " << file << ":"
                           << line);
}

void check_cublas(cublasStatus_t code, const char* expr, const char* file, int line) {
  if (code == CUBLAS_STATUS_SUCCESS) return;
  LLMFT_FAIL("cuBLAS error " << static_cast<int>(code) << " (" << cublasLtGetStatusName(code)
                             << ": " << cublasLtGetStatusString(code) << ") in " << expr << " at "
                             << file << ":" << line);
}

}  // namespace llmft
