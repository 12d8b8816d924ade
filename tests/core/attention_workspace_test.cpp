// The attention backward's workspace bound (core/attention_workspace.h) against what
// cuDNN 9.19's plans asked on an H200 (the first GPU run's log, docs/GPUS.md), and the
// counting device charging it as the backend it stands for would.
#include <doctest/doctest.h>

#include "core/allocator.h"
#include "core/attention_workspace.h"
#include "core/counting/counting_backend.h"

using namespace llmft;

namespace {

constexpr auto kDeterministic = AttentionWorkspaceRule::cudnn_deterministic;
constexpr auto kNondeterministic = AttentionWorkspaceRule::cudnn_nondeterministic;

// cuDNN's figure as the log printed it, `measured` to within `precision` (bytes, or MB
// rounded): the bound covers its top end, and is no more than the slack and the rounding
// over its bottom end.
void check_covers(AttentionWorkspaceRule rule, const AttentionShape& s, double measured,
                  double precision) {
  const auto bound = static_cast<double>(attention_backward_workspace_bytes(rule, s));
  CAPTURE(bound);
  CAPTURE(measured);
  CHECK(bound >= measured + precision / 2);
  CHECK(bound - (measured - precision / 2) <= kAttentionWorkspaceSlackBytes + 256 + precision);
}

}  // namespace

TEST_CASE("the attention workspace bound covers what cuDNN asked on an H200") {
  const AttentionShape tinyllama{DType::bf16, 1, 2048, 32, 4, 64};
  const AttentionShape llama7b{DType::bf16, 1, 2048, 32, 32, 128};
  const AttentionShape gpt2{DType::bf16, 4, 1024, 12, 12, 64};
  // Deterministic: TinyLlama at one row 285 MB, LLaMA-7B 268,435,712 bytes, gpt2 at four
  // rows 101 MB.
  check_covers(kDeterministic, tinyllama, 285e6, 1e6);
  check_covers(kDeterministic, llama7b, 268435712, 0);
  check_covers(kDeterministic, gpt2, 101e6, 1e6);
  // Non-deterministic: TinyLlama 34 MB at one row, 135 MB at four, 270.5 MB at eight.
  const double rows_and_bytes[][3] = {{1, 34e6, 1e6}, {4, 135e6, 1e6}, {8, 270.5e6, 0.1e6}};
  for (const auto& [rows, measured, precision] : rows_and_bytes) {
    AttentionShape s = tinyllama;
    s.B = static_cast<int64_t>(rows);
    CAPTURE(rows);
    check_covers(kNondeterministic, s, measured, precision);
  }
}

TEST_CASE("the deterministic backward takes a batch in chunks that fit a gigabyte") {
  AttentionShape tinyllama{DType::bf16, 8, 2048, 32, 4, 64};
  // One row's bound is 286 MB: three rows a call, each call's bound the three rows'.
  CHECK(attention_backward_chunk_rows(kDeterministic, tinyllama) == 3);
  const size_t three_rows = attention_backward_workspace_bytes(kDeterministic, tinyllama);
  tinyllama.B = 3;
  CHECK(attention_backward_workspace_bytes(kDeterministic, tinyllama) == three_rows);
  CHECK(three_rows <= kDeterministicChunkBytes);
  // A row over the gigabyte still runs, one row a call (LLaMA-7B at 8192: 4.3 GB a row).
  const AttentionShape long_rows{DType::bf16, 2, 8192, 32, 32, 128};
  CHECK(attention_backward_chunk_rows(kDeterministic, long_rows) == 1);
  // The non-deterministic bound grows as T: the whole batch in one call.
  CHECK(attention_backward_chunk_rows(kNondeterministic, {DType::bf16, 8, 2048, 32, 4, 64}) == 8);
}

TEST_CASE("no workspace where cuDNN does not run the backward") {
  const AttentionShape bf16{DType::bf16, 2, 64, 4, 2, 64};
  CHECK(attention_backward_workspace_bytes(AttentionWorkspaceRule::none, bf16) == 0);
  AttentionShape s = bf16;
  s.type = DType::f32;  // our kernels run f32
  CHECK(attention_backward_workspace_bytes(kDeterministic, s) == 0);
  s = bf16;
  s.D = 160;  // over cuDNN's head sizes
  CHECK(attention_backward_workspace_bytes(kDeterministic, s) == 0);
  s = bf16;
  s.D = 36;  // not a multiple of 8
  CHECK(attention_backward_workspace_bytes(kDeterministic, s) == 0);
  s = bf16;
  s.H = 3, s.KVH = 2;  // query heads not a multiple of the kv heads
  CHECK(attention_backward_workspace_bytes(kDeterministic, s) == 0);
  CHECK(attention_backward_workspace_bytes(kDeterministic, bf16) % 256 == 0);
}

TEST_CASE("the counting device asks the workspace of the backend it stands for") {
  CountingBackend gpu(ComputeRule::stored, kDeterministic), cpu;
  Allocator alloc(gpu.memory(), 0);
  const int64_t H = 4, KVH = 2, D = 64, B = 2, T = 64;
  Buffer qkv_buf = alloc.allocate(B * T * (H + 2 * KVH) * D * 2, MemoryCategory::other, "qkv");
  Buffer pos_buf = alloc.allocate(B * T * 4, MemoryCategory::other, "positions");
  const Tensor positions = pos_buf.as(DType::i32, {B, T});
  const Tensor bf16_qkv = qkv_buf.as(DType::bf16, {B, T, (H + 2 * KVH) * D});
  CHECK(gpu.attention_workspace_rule() == kDeterministic);
  CHECK(gpu.attention_backward_workspace(bf16_qkv, positions, H, KVH) ==
        attention_backward_workspace_bytes(kDeterministic, {DType::bf16, B, T, H, KVH, D}));
  CHECK(gpu.attention_backward_workspace(bf16_qkv, positions, H, KVH) > 0);
  CHECK(cpu.attention_workspace_rule() == AttentionWorkspaceRule::none);
  CHECK(cpu.attention_backward_workspace(bf16_qkv, positions, H, KVH) == 0);
}
