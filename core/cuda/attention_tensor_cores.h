// The tensor-core attention kernels' launchers (attention_tensor_cores.cu), which
// attention.cu's launchers try first. Each queues its kernels and returns true, or returns
// false having queued nothing when the call is not theirs: a dtype other than bf16/fp16, a
// head size not in kTensorCoreHeadDims, a tensor not 16-byte aligned, or a device with
// less shared memory per block than the kernels need. Arguments as in cuda_kernels.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace llmft::cuda {

struct SampleStarts;  // attention_layout.cuh

// The head sizes the kernels are built for.
constexpr int kTensorCoreHeadDims[] = {32, 64, 96, 128};

bool tensor_core_attention_forward(void* out, float* lse, const void* qkv, DType type, int64_t B,
                                   int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                                   const SampleStarts& starts, cudaStream_t stream);
bool tensor_core_attention_backward(void* dqkv, const void* dout, const void* qkv, const void* out,
                                    const float* lse, DType type, int64_t B, int64_t T, int64_t H,
                                    int64_t KVH, int64_t D, const SampleStarts& starts,
                                    cudaStream_t stream);

}  // namespace llmft::cuda
