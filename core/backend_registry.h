// The one place that maps a device name to a Backend: "cpu", and in CUDA builds "cuda"
// (the node-local rank's GPU) or "cuda:N". Which backends exist is decided by CMake (cpu
// always; cuda when it finds the toolkit), and only this file asks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/node_placement.h"

namespace llmft {

// `memory_bytes`: the device memory to reserve (0: what the device has free, shared
// evenly by the ranks that share it); the CPU takes host memory as it goes and ignores it.
// Throws llmft::Error naming the device and what to do (an unknown name lists the devices
// this build has; a CUDA build on a machine without a driver or GPU says so).
std::unique_ptr<Backend> make_backend(const std::string& device,
                                      const NodePlacement& placement = {}, size_t memory_bytes = 0);
std::vector<std::string> available_devices();
// One line per device this build has, in available_devices() order, "name: " and what it
// runs on: the BLAS library and kernel for cpu; for cuda the runtime, cuBLASLt, the
// architectures built for and the driver and GPUs here, or why there are none.
std::vector<std::string> describe_devices();
// Why `device` cannot run on this machine ("" when it can), for tests that skip instead:
// a build without its backend, no driver, no device.
std::string device_unavailable_reason(const std::string& device);

}  // namespace llmft
