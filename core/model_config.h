// ModelConfig: the shape of a decoder-only model, and the named presets.
// Hugging Face config.json files are read and written by io/hf_config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmft {

enum class ModelFamily { gpt2, llama };

const char* family_name(ModelFamily f);

// How the rotary embedding's frequencies are scaled for contexts longer than the
// pretraining one (config.json's rope_scaling, or rope_parameters in transformers 5).
// "default" is RopeType::unscaled.
enum class RopeType { unscaled, linear, llama3 };

const char* rope_type_name(RopeType type);

// The parameters are doubles because transformers combines them as Python floats before
// they meet the float32 frequencies (core/rope_frequencies.cpp).
struct RopeScaling {
  RopeType type = RopeType::unscaled;
  double factor = 1.0;                 // linear and llama3: frequencies / factor
  double low_freq_factor = 1.0;        // llama3
  double high_freq_factor = 4.0;       // llama3
  int64_t original_max_positions = 0;  // llama3: the pretraining context
};

struct ModelConfig {
  std::string name;  // preset name or the config file it came from
  ModelFamily family = ModelFamily::gpt2;
  int vocab_size = 0;
  int max_seq_len = 0;  // learned positions (gpt2) / max_position_embeddings
  int hidden = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_kv_head = 0;
  int intermediate = 0;  // MLP width
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;  // llama only
  bool tie_embeddings = true;
  // Token ids config.json names (written back when the model is exported); presets use
  // their tokenizer's: the byte tokenizer's end-of-text 256 as both, GPT-2's
  // <|endoftext|> 50256 as both, LLaMA 1/2's <s> 1 and </s> 2, Llama 3's
  // <|begin_of_text|> 128000 and <|end_of_text|> 128001.
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // config.json's eos_token_id: one id or a list

  int head_dim() const { return hidden / n_head; }
};

// The largest sizes llmft accepts. Each is far above every published model (hidden sizes
// up to 25,600, 126 layers, 128 heads, MLP widths up to 73,728, vocabularies up to 262,144,
// contexts up to 10M positions) and small enough that every product of sizes llmft forms
// (parameter counts, activation bytes of a step) stays far inside 64 bits.
struct ModelLimits {
  static constexpr int64_t vocab_size = int64_t{1} << 24;
  static constexpr int64_t positions = int64_t{1} << 24;
  static constexpr int64_t hidden = int64_t{1} << 17;
  static constexpr int64_t layers = int64_t{1} << 12;
  static constexpr int64_t heads = int64_t{1} << 14;
  static constexpr int64_t intermediate = int64_t{1} << 20;
  static constexpr int64_t parameters = int64_t{10'000'000'000'000};  // 10^13
};

// Throws llmft::Error naming the field that is inconsistent (e.g. hidden % heads), out of
// the ModelLimits, or not a finite number (epsilon in (0, 1), rope_theta > 0).
void validate(const ModelConfig& config);

// Known presets; throws an Error listing them when `name` is not one.
ModelConfig preset_config(const std::string& name);
std::vector<std::string> preset_names();

// Exact parameter count of the full (unsharded) model.
int64_t parameter_count(const ModelConfig& config);

// A parameter count as people write it, to 3 significant digits: "124M", "1.1B", "859K".
std::string parameter_count_text(double parameters);

}  // namespace llmft
