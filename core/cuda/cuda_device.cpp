#include "core/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft {

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code == cudaErrorInsufficientDriver) {
    return "no NVIDIA driver is loaded on this machine (CUDA error 35, "
           "cudaErrorInsufficientDriver), so it cannot run CUDA";
  }
  if (code == cudaErrorNoDevice || (code == cudaSuccess && count == 0)) {
    return "no CUDA device is visible (CUDA error 100, cudaErrorNoDevice); check "
           "CUDA_VISIBLE_DEVICES and the job's GPU allocation";
  }
  return "";  // any other error surfaces, checked, where the device is used
}

int cuda_device_count() {
  const std::string reason = cuda_unavailable_reason();
  LLMFT_REQUIRE(reason.empty(),
                "--device cuda: " << reason << "; run on a GPU node or use --device cpu");
  int count = 0;
  LLMFT_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

int select_cuda_device(const std::string& spec, const NodePlacement& placement) {
  const int count = cuda_device_count();
  if (spec != "cuda") {
    const std::string index = spec.substr(5);  // after "cuda:"
    LLMFT_REQUIRE(spec.rfind("cuda:", 0) == 0 && !index.empty() &&
                      index.find_first_not_of("0123456789") == std::string::npos,
                  "--device " << spec << ": expected cuda or cuda:N");
    const int device = std::stoi(index);
    LLMFT_REQUIRE(device < count, "--device " << spec << ": this node has " << count
                                              << " CUDA device(s), numbered 0 to "
                                              << count - 1);
    return device;
  }
  LLMFT_REQUIRE(placement.local_ranks <= count || placement.share_devices,
                placement.local_ranks
                    << " ranks run on this node but it has " << count
                    << " CUDA device(s): launch at most " << count
                    << " ranks per node (e.g. mpirun --map-by ppr:" << count
                    << ":node), or pass --share-devices to let ranks share them (each then "
                       "gets its share of the memory)");
  return placement.local_rank % count;
}

}  // namespace llmft
