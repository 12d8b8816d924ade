#include "core/model_config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/rope_frequencies.h"

namespace llmft {

namespace {

// The byte tokenizer's end-of-text (io/byte_tokenizer.h) and GPT-2's <|endoftext|>: each
// vocabulary's only special token, so both the first and the last token of a document.
constexpr int64_t kByteEndOfText = 256;
constexpr int64_t kGpt2EndOfText = 50256;
// SentencePiece <s> and </s> of LLaMA 1, Llama 2 and TinyLlama; Llama 3's
// <|begin_of_text|> and <|end_of_text|> (the base models' eos).
constexpr int64_t kLlamaBos = 1, kLlamaEos = 2;
constexpr int64_t kLlama3Bos = 128000, kLlama3Eos = 128001;

ModelConfig with_special_tokens(ModelConfig c, int64_t bos, int64_t eos) {
  c.bos_token_id = bos;
  c.eos_token_ids = {eos};
  return c;
}

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
  const int64_t end_of_text = vocab == kByteEndOfText + 1 ? kByteEndOfText : kGpt2EndOfText;
  return with_special_tokens(c, end_of_text, end_of_text);
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
  if (vocab == kByteEndOfText + 1) return with_special_tokens(c, kByteEndOfText, kByteEndOfText);
  return with_special_tokens(c, kLlamaBos, kLlamaEos);
}

// Llama 3 (Grattafiori et al. 2024): the 128256-token vocabulary, theta 500000, and for
// 3.1 and later the "llama3" frequency scaling from the 8192-token pretraining context.
ModelConfig llama3_shape(const std::string& name, int context, int hidden, int layers, int heads,
                         int intermediate, bool tied, bool scaled) {
  ModelConfig c = llama_shape(name, 128256, context, hidden, layers, heads, 8, intermediate, 1e-5f);
  c.rope_theta = 500000.0f;
  c.tie_embeddings = tied;
  if (scaled) c.rope_scaling = RopeScaling{RopeType::llama3, 32.0, 1.0, 4.0, 8192};
  return with_special_tokens(c, kLlama3Bos, kLlama3Eos);
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
      llama3_shape("llama3-8b", 8192, 4096, 32, 32, 14336, false, false),
      llama3_shape("llama3.2-1b", 131072, 2048, 16, 32, 8192, true, true),
      llama3_shape("llama3.2-3b", 131072, 3072, 28, 24, 8192, true, true),
  };
}

}  // namespace

const char* family_name(ModelFamily f) {
  return f == ModelFamily::gpt2 ? "gpt2" : "llama";
}

const char* rope_type_name(RopeType type) {
  switch (type) {
    case RopeType::unscaled:
      return "default";
    case RopeType::linear:
      return "linear";
    case RopeType::llama3:
      return "llama3";
  }
  return "?";
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

namespace {

void validate_rope(const ModelConfig& c, const std::string& where) {
  LLMFT_REQUIRE(c.head_dim() % 2 == 0 && c.head_dim() / 2 <= kMaxRopePairs,
                where << "the head size " << c.head_dim() << " must be even and at most "
                      << 2 * kMaxRopePairs << " for the rotary embedding");
  LLMFT_REQUIRE(c.rope_theta > 0 && std::isfinite(c.rope_theta),
                where << "rope_theta " << c.rope_theta << " must be a positive finite number");
  const RopeScaling& s = c.rope_scaling;
  const std::string rope = where + "rope scaling \"" + rope_type_name(s.type) + "\": ";
  if (s.type == RopeType::unscaled) return;
  LLMFT_REQUIRE(s.factor > 0 && std::isfinite(s.factor),
                rope << "factor must be a positive finite number, got " << s.factor);
  if (s.type != RopeType::llama3) return;
  LLMFT_REQUIRE(s.low_freq_factor > 0 && s.high_freq_factor > s.low_freq_factor &&
                    std::isfinite(s.high_freq_factor),
                rope << "needs 0 < low_freq_factor < high_freq_factor, got " << s.low_freq_factor
                     << " and " << s.high_freq_factor);
  LLMFT_REQUIRE(s.original_max_positions > 0,
                rope << "original_max_position_embeddings must be positive");
}

// Throws naming `what` when `value` is not in [1, limit].
void require_size(int64_t value, int64_t limit, const std::string& where, const char* what) {
  LLMFT_REQUIRE(value >= 1 && value <= limit,
                where << what << " " << value << " is outside [1, " << limit << "] (ModelLimits)");
}

}  // namespace

void validate(const ModelConfig& c) {
  const std::string where = "model " + c.name + ": ";
  require_size(c.vocab_size, ModelLimits::vocab_size, where, "vocab_size");
  require_size(c.max_seq_len, ModelLimits::positions, where, "the context length");
  require_size(c.hidden, ModelLimits::hidden, where, "the hidden size");
  require_size(c.n_layer, ModelLimits::layers, where, "the number of layers");
  require_size(c.n_head, ModelLimits::heads, where, "the number of heads");
  require_size(c.intermediate, ModelLimits::intermediate, where, "the MLP width");
  LLMFT_REQUIRE(c.hidden % c.n_head == 0, where << "hidden size " << c.hidden
                                                << " is not divisible by the number of heads "
                                                << c.n_head);
  LLMFT_REQUIRE(c.n_kv_head > 0 && c.n_head % c.n_kv_head == 0,
                where << "attention heads " << c.n_head
                      << " must be a multiple of the key/value heads " << c.n_kv_head);
  LLMFT_REQUIRE(c.norm_eps > 0 && c.norm_eps < 1,
                where << "the norm epsilon " << c.norm_eps
                      << " must lie in (0, 1) (published models use 1e-5 or 1e-6)");
  if (c.family == ModelFamily::llama) validate_rope(c, where);
  const int64_t parameters = parameter_count(c);
  LLMFT_REQUIRE(parameters <= ModelLimits::parameters,
                where << "the model would have " << parameters << " parameters, more than "
                      << ModelLimits::parameters << " (ModelLimits); check its sizes");
}

std::string parameter_count_text(double parameters) {
  std::ostringstream os;
  os.precision(3);
  if (parameters >= 1e9) {
    os << parameters / 1e9 << "B";
  } else if (parameters >= 1e6) {
    os << parameters / 1e6 << "M";
  } else if (parameters >= 1e3) {
    os << parameters / 1e3 << "K";
  } else {
    os << parameters;
  }
  return os.str();
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
