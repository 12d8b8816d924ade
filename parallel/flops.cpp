#include "parallel/flops.h"

namespace llmft {

double training_flops_per_token(const ModelConfig& c, int seq_len) {
  const double C = c.hidden, I = c.intermediate, V = c.vocab_size, L = c.n_layer;
  const double kv = static_cast<double>(c.n_kv_head) * c.head_dim();
  const double mlp_matrices = c.family == ModelFamily::gpt2 ? 2.0 : 3.0;
  const double block_matmul = C * (C + 2 * kv) + C * C + mlp_matrices * I * C;
  const double matmul_params = L * block_matmul + V * C;  // the head's V x C product
  return 6.0 * matmul_params + 12.0 * L * C * seq_len;
}

Throughput step_throughput(double processed_tokens, double seconds, double flops_per_token,
                           int devices, double peak_flops_per_device) {
  Throughput t;
  t.tokens_per_s = processed_tokens / seconds;
  t.tokens_per_s_per_device = t.tokens_per_s / devices;
  t.model_flops_per_s = t.tokens_per_s * flops_per_token;
  if (peak_flops_per_device > 0) t.mfu = t.model_flops_per_s / (devices * peak_flops_per_device);
  return t;
}

}  // namespace llmft
