// The seconds a GPU takes for the kernels a dry run tallied (core/counting/work_tally.h),
// priced kernel by kernel with the device's GpuKernelModel (gpu_kernel_model.h), and kept
// apart by class so that a plan can say which kernels hold its step back.
#pragma once

#include <array>

#include "core/attention_workspace.h"
#include "core/counting/work_tally.h"
#include "core/dtype.h"
#include "parallel/planner/gpu_kernel_model.h"

namespace llmft {

struct KernelSeconds {
  double products = 0;           // GEMMs
  double attention_forward = 0;  // with its FLOPs below
  double attention_backward = 0;
  std::array<double, kKernelKinds> memory_bound{};  // by KernelKind, at the HBM bandwidth
  double gaps = 0;                                  // the fixed gap of every kernel call
  double product_flops = 0, attention_forward_flops = 0, attention_backward_flops = 0;

  double total() const;
  KernelSeconds& operator+=(const KernelSeconds& other);
  KernelSeconds scaled(double factor) const;
};

// Whether plans price a step kernel by kernel on `model`'s device: it has a model and
// the step computes in a 16-bit dtype (the figures are bf16/fp16 tensor-core rates).
bool gpu_kernel_model_applies(const GpuKernelModel& model, DType dtype);

// `attention`: which backward the device runs (cuDNN's deterministic one adds its dQ pass).
// REQUIRES: model.known(), peak_flops > 0
KernelSeconds gpu_kernel_seconds(const WorkTally& tally, const GpuKernelModel& model,
                                 double peak_flops, AttentionWorkspaceRule attention);

// "norms", "cross-entropy", ...: the kind's name in the plan's breakdown.
const char* kernel_kind_name(KernelKind kind);

}  // namespace llmft
