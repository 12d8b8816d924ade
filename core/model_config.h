// ModelConfig: the shape of a decoder-only model, and the named presets.
// Hugging Face config.json files are read and written by io/hf_config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmft {

enum class ModelFamily { gpt2, llama };

const char* family_name(ModelFamily f);

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
  bool tie_embeddings = true;

  int head_dim() const { return hidden / n_head; }
};

// Throws llmft::Error naming the field that is inconsistent (e.g. hidden % heads).
void validate(const ModelConfig& config);

// Known presets; throws an Error listing them when `name` is not one.
ModelConfig preset_config(const std::string& name);
std::vector<std::string> preset_names();

// Exact parameter count of the full (unsharded) model.
int64_t parameter_count(const ModelConfig& config);

}  // namespace llmft
