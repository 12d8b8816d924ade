// Small model configs and random token batches for tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/model_config.h"

namespace llmft::testing {

struct TestShape {
  int vocab, context, hidden, layers, heads, kv_heads, inner;
};

inline ModelConfig test_config(ModelFamily family, TestShape s, bool tied) {
  ModelConfig c;
  c.name = "test";
  c.family = family;
  c.vocab_size = s.vocab;
  c.max_seq_len = s.context;
  c.hidden = s.hidden;
  c.n_layer = s.layers;
  c.n_head = s.heads;
  c.n_kv_head = s.kv_heads;
  c.intermediate = s.inner;
  c.tie_embeddings = tied;
  return c;
}

// The pairing most tests use: GPT-2 tied with full heads, or LLaMA untied with grouped
// queries (half as many kv heads).
inline ModelConfig family_config(ModelFamily family, TestShape s) {
  const bool gpt2 = family == ModelFamily::gpt2;
  s.kv_heads = gpt2 ? s.heads : s.heads / 2;
  return test_config(family, s, gpt2);
}

inline std::vector<int32_t> random_tokens(size_t n, int vocab, std::mt19937_64& rng) {
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
  return tokens;
}

}  // namespace llmft::testing
