// AttentionWorkspace: the device workspace the attention backward asks of its caller, as a
// rule the real backend and the counting device (the memory model's dry run) share, so
// that the plan charges what the run allocates, to the byte.
//
// Only cuDNN's fused SDPA backward (core/cuda/cudnn_attention.h) needs one. Its size is a
// stated bound, from what cuDNN 9.19's plans asked on an H200 (docs/GPUS.md; gpu_check
// prints cuDNN's figure beside it): the deterministic backward keeps the dP matrix,
// B H T'^2 2 bytes, the non-deterministic one dQ's f32 accumulator and the softmax sums,
// B H T' (D + 1) 4 bytes; with grouped queries (KVH < H) both also keep dK and dV per
// query head, B H T' D 4 bytes; T' is T rounded up to kSequenceTile (cudnn-frontend pads
// dP's sides to its 64- and 128-row tiles, and packed documents' calls pad their lengths
// so: core/attention_documents.h); plus kSlackBytes for the small buffers beside them
// (measured: 256 B). A plan that needs more than the bound is not chosen: the call runs
// on our own kernels instead, which need none.
//
// The deterministic bound grows as T^2, so that backward takes a batch in chunks of rows
// whose bound fits kDeterministicChunkBytes (at least one row): the same bits as one call
// (rows are independent), and a workspace that does not grow with the micro-batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace llmft {

// Which attention backward a backend runs for 16-bit training rows holding one sample each.
enum class AttentionWorkspaceRule {
  none,                    // kernels that need no workspace (CPU, our CUDA kernels)
  cudnn_deterministic,     // cuDNN's deterministic backward (the default on GPUs)
  cudnn_nondeterministic,  // cuDNN's faster one (dQ summed with atomics)
};

std::string attention_workspace_rule_name(AttentionWorkspaceRule rule);

// One attention call: qkv(B, T, (H + 2 KVH) D) in `type`.
struct AttentionShape {
  DType type = DType::bf16;
  int64_t B = 0, T = 0, H = 0, KVH = 0, D = 0;
};

// Whether cuDNN's SDPA takes the shape at all: 16-bit data, head sizes in multiples of 8 up
// to 128 (every head then starts on 16 bytes), query heads a multiple of the kv heads.
bool cudnn_takes_attention(const AttentionShape& shape);

constexpr size_t kAttentionWorkspaceSlackBytes = size_t{1} << 20;
constexpr int64_t kSequenceTile = 128;
constexpr size_t kDeterministicChunkBytes = size_t{1} << 30;

// The rows of a batch one backward call takes (B unless the deterministic bound splits it).
int64_t attention_backward_chunk_rows(AttentionWorkspaceRule rule, const AttentionShape& shape);

// The bound above (a multiple of 256 bytes) for one call over all of shape's B rows; 0 for
// rule none and shapes cuDNN does not take.
size_t attention_workspace_bound(AttentionWorkspaceRule rule, const AttentionShape& shape);

// The workspace bytes one call of the rule's backward gets at this shape: the bound for a
// chunk of rows (attention_backward_chunk_rows).
size_t attention_backward_workspace_bytes(AttentionWorkspaceRule rule, const AttentionShape& shape);

}  // namespace llmft
