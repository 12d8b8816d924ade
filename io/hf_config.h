// Hugging Face config.json <-> ModelConfig. Reads the keys transformers writes for
// GPT2LMHeadModel and LlamaForCausalLM: each key is used, ignored (hf_config.cpp lists
// the keys transformers knows that do not change the computation) or refused by name,
// and a key llmft does not know is refused, naming the nearest known key; writes a
// config that transformers loads unchanged, with the rope scaling and the bos/eos token
// ids.
#pragma once

#include <string>

#include "core/model_config.h"
#include "io/json.h"

namespace llmft::io {

// Errors name the file and the key that is missing or malformed.
ModelConfig read_hf_config(const std::string& path);
ModelConfig parse_hf_config(const Json& json, const std::string& source);
Json hf_config_json(const ModelConfig& config);

// A preset name, or a path ending in .json (or a directory holding config.json).
ModelConfig resolve_model(const std::string& spec);

}  // namespace llmft::io
