#include "core/backend_registry.h"

#include "core/cpu/cpu_backend.h"
#include "core/error.h"

namespace llmft {

std::vector<std::string> available_devices() {
  return {"cpu"};
}

std::unique_ptr<Backend> make_backend(const std::string& device) {
  if (device == "cpu") return std::make_unique<CpuBackend>();
  if (device == "cuda") {
    LLMFT_FAIL("--device cuda: this build of llmft has no CUDA backend; use --device cpu");
  }
  LLMFT_FAIL("--device " << device << ": unknown device; this build has: cpu");
}

}  // namespace llmft
