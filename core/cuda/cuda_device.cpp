#include "core/cuda/cuda_device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

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
