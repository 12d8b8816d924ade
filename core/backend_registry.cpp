#include "core/backend_registry.h"

#include "core/cpu/blas_kernel.h"
#include "core/cpu/cpu_backend.h"
#include "core/error.h"

#ifdef LLMFT_WITH_CUDA
#include "core/cuda/cuda_backend.h"
#include "core/cuda/cuda_device.h"
#endif

namespace llmft {

std::vector<std::string> available_devices() {
#ifdef LLMFT_WITH_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::vector<std::string> describe_devices() {
  std::vector<std::string> lines = {"cpu: " + cpu::blas_description()};
#ifdef LLMFT_WITH_CUDA
  lines.push_back("cuda: " + cuda_build_description());
#endif
  return lines;
}

std::string device_unavailable_reason(const std::string& device) {
  if (device == "cpu") return "";
#ifdef LLMFT_WITH_CUDA
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) return cuda_unavailable_reason();
#endif
  return "this build of llmft has no " + device + " backend";
}

std::unique_ptr<Backend> make_backend(const std::string& device, const NodePlacement& placement,
                                      size_t memory_bytes) {
  if (device == "cpu") return std::make_unique<CpuBackend>();
  const bool cuda = device == "cuda" || device.rfind("cuda:", 0) == 0;
#ifdef LLMFT_WITH_CUDA
  if (cuda) {
    const CudaPlacement place = place_on_cuda_device(device, placement);
    return std::make_unique<CudaBackend>(place.device, memory_bytes, place.ranks_sharing,
                                         placement.node_barrier);
  }
#else
  (void)placement;
  (void)memory_bytes;
  LLMFT_REQUIRE(!cuda, "--device " << device << ": this build of llmft has no CUDA backend (CMake "
                                   << "found no CUDA toolkit); rebuild where nvcc is installed, "
                                      "or use --device cpu");
#endif
  std::string names;
  for (const std::string& name : available_devices()) names += " " + name;
  LLMFT_FAIL("--device " << device << ": unknown device; this build has:" << names);
}

}  // namespace llmft
