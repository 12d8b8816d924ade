// The one place that maps a device name ("cpu", "cuda") to a Backend. Which backends
// exist is decided by CMake (cpu always; cuda when LLMFT_CUDA is on).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"

namespace llmft {

// Throws llmft::Error naming the device and the devices this build has.
std::unique_ptr<Backend> make_backend(const std::string& device);
std::vector<std::string> available_devices();

}  // namespace llmft
