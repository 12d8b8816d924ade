#include "core/model_config.h"

#include <sstream>

#include "core/error.h"

namespace llmft {

namespace {

ModelConfig gpt2_shape(const std::string& name, int vocab, int positions, int hidden, int layers,
                       int heads) {
  ModelConfig c;
  c.name = name;
  c.family = ModelFamily::gpt2;
  c.vocab_size = vocab;
  c.max_seq_len = positions;
  c.hidden = hidden;
  c.n_layer = layers;
  c.n_head = heads;
  c.n_kv_head = heads;
  c.intermediate = 4 * hidden;
  c.norm_eps = 1e-5f;
  c.tie_embeddings = true;
  return c;
}

ModelConfig llama_shape(const std::string& name, int vocab, int context, int hidden, int layers,
                        int heads, int kv_heads, int intermediate, float eps) {
  ModelConfig c;
  c.name = name;
  c.family = ModelFamily::llama;
  c.vocab_size = vocab;
  c.max_seq_len = context;
  c.hidden = hidden;
  c.n_layer = layers;
  c.n_head = heads;
  c.n_kv_head = kv_heads;
  c.intermediate = intermediate;
  c.norm_eps = eps;
  c.rope_theta = 10000.0f;
  c.tie_embeddings = false;
  return c;
}

std::vector<ModelConfig> presets() {
  return {
      // The demo default: byte-level vocabulary (256 bytes + end-of-text).
      gpt2_shape("gpt2-tiny", 257, 256, 128, 4, 4),
      gpt2_shape("gpt2", 50257, 1024, 768, 12, 12),
      gpt2_shape("gpt2-medium", 50257, 1024, 1024, 24, 16),
      gpt2_shape("gpt2-large", 50257, 1024, 1280, 36, 20),
      gpt2_shape("gpt2-xl", 50257, 1024, 1600, 48, 25),
      // The LLaMA demo/test default: byte-level vocabulary, grouped-query attention.
      llama_shape("llama-tiny", 257, 256, 128, 4, 4, 2, 352, 1e-5f),
      // Published shapes (Touvron et al. 2023a/b; TinyLlama). llama-30b is the 33B model.
      llama_shape("llama-7b", 32000, 2048, 4096, 32, 32, 32, 11008, 1e-6f),
      llama_shape("llama-13b", 32000, 2048, 5120, 40, 40, 40, 13824, 1e-6f),
      llama_shape("llama-30b", 32000, 2048, 6656, 60, 52, 52, 17920, 1e-6f),
      llama_shape("llama-65b", 32000, 2048, 8192, 80, 64, 64, 22016, 1e-5f),
      llama_shape("llama2-7b", 32000, 4096, 4096, 32, 32, 32, 11008, 1e-5f),
      llama_shape("llama2-13b", 32000, 4096, 5120, 40, 40, 40, 13824, 1e-5f),
      llama_shape("llama2-70b", 32000, 4096, 8192, 80, 64, 8, 28672, 1e-5f),
      llama_shape("tinyllama-1.1b", 32000, 2048, 2048, 22, 32, 4, 5632, 1e-5f),
  };
}

}  // namespace

const char* family_name(ModelFamily f) {
  return f == ModelFamily::gpt2 ? "gpt2" : "llama";
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const ModelConfig& c : presets()) names.push_back(c.name);
  return names;
}

ModelConfig preset_config(const std::string& name) {
  for (const ModelConfig& c : presets()) {
    if (c.name == name) return c;
  }
  std::ostringstream known;
  for (const std::string& n : preset_names()) known << " " << n;
  LLMFT_FAIL("--model " << name
                        << ": not a preset and not a .json config file; presets:" << known.str());
}

void validate(const ModelConfig& c) {
  const std::string where = "model " + c.name + ": ";
  LLMFT_REQUIRE(c.vocab_size > 0, where << "vocab_size must be positive");
  LLMFT_REQUIRE(c.max_seq_len > 0, where << "the context length must be positive");
  LLMFT_REQUIRE(c.hidden > 0 && c.n_layer > 0 && c.n_head > 0,
                where << "hidden size, layers and heads must be positive");
  LLMFT_REQUIRE(c.hidden % c.n_head == 0, where << "hidden size " << c.hidden
                                                << " is not divisible by the number of heads "
                                                << c.n_head);
  LLMFT_REQUIRE(c.n_kv_head > 0 && c.n_head % c.n_kv_head == 0,
                where << "attention heads " << c.n_head
                      << " must be a multiple of the key/value heads " << c.n_kv_head);
  LLMFT_REQUIRE(c.intermediate > 0, where << "the MLP width must be positive");
  LLMFT_REQUIRE(c.norm_eps > 0, where << "the norm epsilon must be positive");
}

int64_t parameter_count(const ModelConfig& c) {
  const int64_t C = c.hidden, V = c.vocab_size, I = c.intermediate, L = c.n_layer;
  const int64_t kv = static_cast<int64_t>(c.n_kv_head) * c.head_dim();
  if (c.family == ModelFamily::gpt2) {
    int64_t block =
        2 * C + (C * (C + 2 * kv) + C + 2 * kv) + (C * C + C) + 2 * C + (I * C + I) + (C * I + C);
    int64_t head = c.tie_embeddings ? 0 : V * C;
    return V * C + static_cast<int64_t>(c.max_seq_len) * C + L * block + 2 * C + head;
  }
  int64_t block = C + C * (C + 2 * kv) + C * C + C + 3 * I * C;
  int64_t head = c.tie_embeddings ? 0 : V * C;
  return V * C + L * block + C + head;
}

}  // namespace llmft
