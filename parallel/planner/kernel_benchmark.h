// The rates of the kernels other than products and attention, measured at a run's shapes
// for --auto-plan's time model: each kind of kernel (core/counting/work_tally.h's
// KernelKind) runs through the backend on tensors of the model's sizes for one sequence of
// the run's length, and its rate is the bytes the work tally counts for those calls over
// the time they took (the slowest rank's). Milliseconds in all.
#pragma once

#include <array>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/counting/work_tally.h"
#include "core/model_config.h"
#include "optim/optimizer.h"

namespace llmft {

// Bytes/s per KernelKind; 0 for a kind the run does not use (rope of GPT-2, AdaLomo's passes).
// Collective over `world` (null: one rank).
std::array<double, kKernelKinds> measure_kernel_rates(Backend& backend, Allocator& allocator,
                                                      Communicator* world, const ModelConfig& model,
                                                      int seq_len, DType stored,
                                                      OptimizerKind optimizer);

}  // namespace llmft
