#include "core/attention_workspace.h"

#include <algorithm>

namespace llmft {

namespace {

// The bound for `rows` rows, before rounding (attention_workspace.h gives the sources).
size_t bound_for_rows(AttentionWorkspaceRule rule, const AttentionShape& s, int64_t rows) {
  const auto padded_T =
      static_cast<size_t>((s.T + kSequenceTile - 1) / kSequenceTile * kSequenceTile);
  const size_t per_head_row = static_cast<size_t>(rows * s.H) * padded_T;
  const size_t main = rule == AttentionWorkspaceRule::cudnn_deterministic
                          ? per_head_row * padded_T * 2
                          : per_head_row * static_cast<size_t>(s.D + 1) * 4;
  const size_t grouped = s.KVH < s.H ? per_head_row * static_cast<size_t>(s.D) * 4 : 0;
  return main + grouped + kAttentionWorkspaceSlackBytes;
}

}  // namespace

std::string attention_workspace_rule_name(AttentionWorkspaceRule rule) {
  switch (rule) {
    case AttentionWorkspaceRule::none:
      return "none";
    case AttentionWorkspaceRule::cudnn_deterministic:
      return "cuDNN deterministic";
    case AttentionWorkspaceRule::cudnn_nondeterministic:
      return "cuDNN non-deterministic";
  }
  return "none";
}

bool cudnn_takes_attention(const AttentionShape& s) {
  return (s.type == DType::bf16 || s.type == DType::f16) && s.D % 8 == 0 && s.D > 0 && s.D <= 128 &&
         s.KVH > 0 && s.H % s.KVH == 0;
}

int64_t attention_backward_chunk_rows(AttentionWorkspaceRule rule, const AttentionShape& s) {
  if (rule != AttentionWorkspaceRule::cudnn_deterministic || s.B <= 1) return s.B;
  const size_t row = bound_for_rows(rule, s, 1);
  const auto fitting = static_cast<int64_t>(kDeterministicChunkBytes / row);
  return std::clamp<int64_t>(fitting, 1, s.B);
}

size_t attention_workspace_bound(AttentionWorkspaceRule rule, const AttentionShape& s) {
  if (rule == AttentionWorkspaceRule::none || !cudnn_takes_attention(s) || s.B * s.T == 0) {
    return 0;
  }
  return (bound_for_rows(rule, s, s.B) + 255) / 256 * 256;
}

size_t attention_backward_workspace_bytes(AttentionWorkspaceRule rule, const AttentionShape& s) {
  AttentionShape chunk = s;
  chunk.B = attention_backward_chunk_rows(rule, s);
  return attention_workspace_bound(rule, chunk);
}

}  // namespace llmft
