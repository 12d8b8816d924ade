// Checks for CUDA runtime and cuBLASLt calls and kernel launches: a failure becomes an
// llmft::Error naming the call, the error and where it happened.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace llmft {

void check_cuda(cudaError_t code, const char* expr, const char* file, int line);
void check_cublas(cublasStatus_t code, const char* expr, const char* file, int line);

}  // namespace llmft

#define LLMFT_CUDA_CHECK(call) ::llmft::check_cuda((call), #call, __FILE__, __LINE__)
#define LLMFT_CUBLAS_CHECK(call) ::llmft::check_cublas((call), #call, __FILE__, __LINE__)
// After a kernel launch: the launch's own error (bad configuration, no kernel image).
#define LLMFT_CUDA_LAUNCH_CHECK() \
  ::llmft::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
