#include "core/cuda/cuda_device.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/byte_size.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_kernels.h"
#include "core/cuda_support.h"
#include "core/error.h"

namespace llmft {
namespace {

// CUDA's version numbers: 1000 x major + 10 x minor.
std::string cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

int capability(const cudaDeviceProp& properties) {
  return 10 * properties.major + properties.minor;
}

bool supported(const cudaDeviceProp& properties) {
  return capability(properties) >= kMinimumCudaComputeCapability;
}

std::string gpu_name(int device, const cudaDeviceProp& properties) {
  return "cuda:" + std::to_string(device) + " (" + properties.name + ", compute capability " +
         compute_capability_text(capability(properties)) + ")";
}

}  // namespace

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

std::string cuda_device_unsupported_reason(int device, const cudaDeviceProp& properties) {
  if (!supported(properties)) {
    return gpu_name(device, properties) +
           " is older than llmft's CUDA backend supports: it needs compute capability " +
           compute_capability_text(kMinimumCudaComputeCapability) +
           " (Ampere) or later; use a newer GPU or --device cpu";
  }
  const cudaError_t image = cuda::kernel_image_status();
  if (image == cudaErrorNoKernelImageForDevice) {
    return gpu_name(device, properties) +
           ": this build of llmft has no code for it (built for architectures " +
           LLMFT_CUDA_ARCHITECTURES +
           "); rebuild with -DLLMFT_CUDA_ARCHITECTURES=" + std::to_string(capability(properties));
  }
  LLMFT_CUDA_CHECK(image);
  return "";
}

std::string cuda_build_description() {
  int runtime = 0;
  LLMFT_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const size_t cublas = cublasLtGetVersion();  // 10000 x major + 100 x minor + patch
  std::string text = "CUDA runtime " + cuda_version(runtime) + ", cuBLASLt " +
                     std::to_string(cublas / 10000) + "." + std::to_string(cublas / 100 % 100) +
                     "." + std::to_string(cublas % 100) + ", built for architectures " +
                     LLMFT_CUDA_ARCHITECTURES;
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty()) return text + "; " + reason;
  int driver = 0, count = 0;
  LLMFT_CUDA_CHECK(cudaDriverGetVersion(&driver));
  LLMFT_CUDA_CHECK(cudaGetDeviceCount(&count));
  text += "; driver for CUDA " + cuda_version(driver);
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties;
    LLMFT_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    text += "; " + gpu_name(device, properties) + " " +
            format_bytes(static_cast<double>(properties.totalGlobalMem));
    if (!supported(properties))
      text += " (too old: the backend needs " +
              compute_capability_text(kMinimumCudaComputeCapability) + ")";
  }
  return text;
}

int cuda_device_count() {
  const std::string reason = cuda_unavailable_reason();
  LLMFT_REQUIRE(reason.empty(),
                "--device cuda: " << reason << "; run on a GPU node or use --device cpu");
  int count = 0;
  LLMFT_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

CudaPlacement place_on_cuda_device(const std::string& spec, const NodePlacement& placement) {
  const int count = cuda_device_count();
  int device = placement.local_rank % count;
  if (spec != "cuda") {
    const std::string index = spec.substr(5);  // after "cuda:"
    LLMFT_REQUIRE(spec.rfind("cuda:", 0) == 0 && !index.empty() &&
                      index.find_first_not_of("0123456789") == std::string::npos,
                  "--device " << spec << ": expected cuda or cuda:N");
    device = std::stoi(index);
    LLMFT_REQUIRE(device < count, "--device " << spec << ": this node has " << count
                                              << " CUDA device(s), numbered 0 to " << count - 1);
  }
  const std::string refused =
      " launch at most one rank per GPU (mpirun --map-by ppr:GPUS:node, or srun "
      "--gpus-per-task=1), or pass --share-devices to let ranks share them (each then gets "
      "its share of the memory)";
  if (!placement.node_gather) {
    // Nothing to compare with: the node's ranks take its GPUs in turn (cuda), or all the
    // one named (cuda:N).
    const int sharing = spec != "cuda" ? placement.local_ranks
                                       : (placement.local_ranks - device + count - 1) / count;
    LLMFT_REQUIRE(sharing == 1 || placement.share_devices,
                  placement.local_ranks << " ranks run on this node and " << sharing
                                        << " of them on cuda:" << device << ";" << refused);
    return CudaPlacement{device, sharing};
  }
  // The node's ranks compare the physical GPUs they chose: ranks a launcher bound to a GPU
  // each (CUDA_VISIBLE_DEVICES) all see theirs as device 0 and still run on different ones.
  char bus_id[32] = {};
  LLMFT_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
  const std::vector<std::string> node = placement.node_gather(bus_id);
  const int sharing = static_cast<int>(std::count(node.begin(), node.end(), bus_id));
  LLMFT_REQUIRE(sharing == 1 || placement.share_devices,
                placement.local_ranks << " ranks run on this node and " << sharing
                                      << " of them on one GPU (PCI " << bus_id << ", --device "
                                      << spec << ");" << refused);
  return CudaPlacement{device, sharing};
}

}  // namespace llmft
