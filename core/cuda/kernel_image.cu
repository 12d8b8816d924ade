// Whether the current GPU can run this build's kernels: nvcc embeds code for the
// architectures CMake names (LLMFT_CUDA_ARCHITECTURES), and a GPU finds none of its own
// there only when a kernel is first loaded. Asking for one kernel's attributes loads it
// (just-in-time compiling its PTX where that is what fits) without launching anything.
#include "core/cuda/cuda_kernels.h"

namespace llmft::cuda {
namespace {

__global__ void probe_kernel() {}

}  // namespace

cudaError_t kernel_image_status() {
  cudaFuncAttributes attributes;
  const cudaError_t code = cudaFuncGetAttributes(&attributes, probe_kernel);
  (void)cudaGetLastError();  // the answer is returned, not left for the next check
  return code;
}

}  // namespace llmft::cuda
